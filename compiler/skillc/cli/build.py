"""``skillc build``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..errors import BuildError, SkillcError
from ..model import Diagnostic, Severity


@click.command("build")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="Read this skills.toml instead of looking up ./skills.toml, ./.rkat/skills.toml and the user config.")
@click.option("--out", "-o", default="dist", show_default=True, type=click.Path(file_okay=False),
              help="The bundle folder (replaced atomically when the build succeeds).")
@click.option("--no-site", is_flag=True, help="Skip the docs page (index.html).")
@click.option("--memory", "memory", multiple=True, type=click.Path(exists=True),
              help="Memory files or folders to freeze into the bundle (repeatable).")
@click.option("--keep-going", is_flag=True,
              help="Publish the valid skills when some fail lint or have unsafe IDs; list the others in the manifest.")
@click.option("--force", is_flag=True, help="Replace an output folder that holds something other than a skillc bundle.")
@click.option("--emit", "emit", multiple=True, type=click.Choice(["whoosh"]),
              help="Extra outputs: whoosh (a whoosh search index, needs the `whoosh` extra).")
@click.option("--no-cache", is_flag=True, help="Parse, lint and render everything again (the cache is not read or written).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on standard output.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def build(paths, config_path, out, no_site, memory, keep_going, force, emit, no_cache, as_json, quiet):
    """Compile skill repositories into a static bundle (default ./dist).

    PATH arguments are skill repositories (folders), in precedence order; without them the
    repositories come from skills.toml (project, then user level) or --config, and with neither
    the embedded skills are built. Every skill is linted first: an error fails the build (exit 1)
    and names the skills, unless --keep-going.

    The bundle holds the Meerkat Skills API under api/ (serve it with `skillc serve`, or any static
    host with the routing configs in _routing/), the discovery index .well-known/agent-skills/,
    one zip per skill, the search indexes and api/manifest.json (every file with its SHA-256).
    Builds are deterministic (SOURCE_DATE_EPOCH is honoured), atomic, locked and incremental
    (cache: $SKILLC_CACHE_DIR, else ~/.cache/skillc).

    Exit status: 0 built, 1 the inputs fail (lint errors, unsafe IDs, unreachable repository,
    refused output folder, another build running), 2 usage or configuration error.
    """
    from ..build.options import BuildOptions

    opts = BuildOptions(paths=tuple(paths), config=config_path, out=out, site=not no_site, memory=tuple(memory),
                        keep_going=keep_going, force=force, emit=tuple(emit), use_cache=not no_cache)
    result = _run(opts, show_progress=not quiet and not as_json and sys.stderr.isatty(), as_json=as_json)
    summary = result.summary()
    if as_json:
        click.echo(json.dumps({"ok": True, **summary}, ensure_ascii=False, sort_keys=True))
        return
    _print_diagnostics(result.diagnostics, quiet)
    if quiet:
        return
    for note in result.notes:
        click.echo(f"warning: {note}", err=True)
    _print_excluded(result)
    _print_summary(result, summary, out)


class _Bars:
    """A progress bar per stage (reading, linting, publishing), one below the other."""

    def __init__(self) -> None:
        self.bars: list = []

    def progress(self, label: str, total: int):
        if total < 2:
            return None
        while self.bars:  # the previous stage is over
            self.bars.pop().__exit__(None, None, None)
        bar = click.progressbar(length=total, label=label.ljust(18), file=sys.stderr)
        bar.__enter__()
        self.bars.append(bar)
        return bar.update

    def close(self) -> None:
        for bar in self.bars:
            bar.__exit__(None, None, None)


def _run(opts, *, show_progress: bool, as_json: bool):
    """Run the build; on failure print the errors that failed it (with their file and line) before the
    one-line error the exception becomes."""
    from ..build.early import head_start

    bars = _Bars()
    try:
        try:
            with head_start(opts) as start:  # (before the stages' imports: build.early)
                from ..build.pipeline import run_build

                return run_build(opts, bars.progress if show_progress else None, start)
        except OSError as exc:  # the environment (a full disk, a read-only folder), not the inputs: exit 1
            where = f": {exc.filename}" if exc.filename else ""
            raise BuildError(f"{exc.strerror or exc}{where}", hint="check the free space and permissions there; "
                             "the previous bundle is untouched") from exc
    except SkillcError as exc:
        failed, diagnostics = getattr(exc, "failed", {}), getattr(exc, "diagnostics", ())
        if as_json:
            click.echo(json.dumps({"ok": False, "error": str(exc), "hint": exc.hint, "failed": failed,
                                   "diagnostics": [_diagnostic_json(r, d) for r, d in diagnostics]},
                                  ensure_ascii=False, sort_keys=True))
        else:
            for repo, d in diagnostics:
                click.echo(_diagnostic_line(repo, d), err=True)
        raise
    finally:
        bars.close()


def _print_diagnostics(diagnostics, quiet: bool) -> None:
    # Errors first (of the skills --keep-going left out: --quiet prints them too), then warnings,
    # then the R101 shadowing lines; each group in the order the build found them.
    rank = {Severity.ERROR: 0, Severity.WARNING: 1}
    shown = [(repo, d) for repo, d in diagnostics
             if d.severity is Severity.ERROR or (not quiet and (d.severity is not Severity.INFO or d.code == "R101"))]
    for repo, d in sorted(shown, key=lambda rd: rank.get(rd[1].severity, 2)):
        click.echo(_diagnostic_line(repo, d), err=True)


def _print_excluded(result) -> None:
    """(--keep-going) each left-out skill, and why."""
    from ..discover.walk import path_key
    from ..secrets import redact
    from ..validate.report import one_line

    for skill_id in sorted(result.excluded, key=path_key):
        shown_id, reason = redact(skill_id)[0], redact(result.excluded[skill_id])[0]
        where = result.excluded_from.get(skill_id)
        source = f" ({one_line(where)}'s copy)" if where else ""
        click.echo(f"excluded {one_line(shown_id)}{source}: {one_line(reason)}", err=True)


def _print_summary(result, summary, out: str) -> None:
    from ..model import plural
    from ..validate.report import shell_word

    out_shown = os.path.relpath(result.out) if not Path(out).is_absolute() else str(result.out)
    size = summary["bytes"] / 1e6
    click.echo(
        f"Built {plural(summary['skills'], 'skill')} "
        f"({plural(summary['collections'], 'collection')}, {plural(summary['files'], 'file')}, {size:.1f} MB) "
        f"into {out_shown}/ "
        f"in {summary['seconds']:.1f} s; parsed {summary['parsed']:,}, from cache {summary['cached']:,}"
        + (f"; {summary['shadowed']:,} shadowed" if summary["shadowed"] else "")
        + (f"; {len(summary['excluded']):,} excluded" if summary["excluded"] else "")
        + (f"; {plural(summary['warnings'], 'warning')}" if summary["warnings"] else "")
    )
    click.echo(f"Serve it: skillc serve {shell_word(out_shown)}", err=True)


def _diagnostic_line(repository: str, d: Diagnostic) -> str:
    """``repository:path:line:col: CODE message`` (without the parts a diagnostic does not have: a
    repository-wide one has no path, one about several repositories no repository)."""
    from ..validate.report import (
        one_line,  # (a remote registry's IDs are data: no control character reaches the terminal)
    )

    where = ":".join(one_line(part) for part in (repository, d.path) if part)
    if d.path:
        where += f":{d.line}:{d.column}"
    return f"{where}: {d.code} {one_line(d.message)}" if where else f"{d.code} {one_line(d.message)}"


def _diagnostic_json(repository: str, d: Diagnostic) -> dict[str, object]:
    return {"repository": repository, **d.to_json()}
