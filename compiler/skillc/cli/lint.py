"""``skillc lint``: check skills, lightweight skill files and convention files.

PATH handling (documented in ``--help`` and docs/guides/lint.md):

* no PATH: the current directory is the root;
* a directory: a root of its own (everything under it is linted);
* a file (``SKILL.md`` in any letter case, a ``.skills/*.md`` file, a convention file): that one
  skill or file is linted, as part of the repository it sits in: the current directory when the
  file is inside it (what pre-commit does), else the folder above the skill; any other file of a
  skill (a reference, a script) lints the skill it belongs to;
* one root: paths are relative to it; several roots: paths are relative to the current directory.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import click

from .. import secrets
from ..config.files import (
    anchored,
    find_lint_config,
    lint_config,
    quiet_exists,
    quiet_is_dir,
    quiet_is_file,
    read_config_file,
)
from ..discover.walk import CONVENTION_UPPER, RESOURCE_DIRS, SKILL_FILE_NAMES, excluded_by
from ..errors import SkillcError
from ..layout import MANIFEST_DIR, MANIFEST_NAMES
from ..model import Diagnostic, Severity
from ..paths import inside as _inside
from ..validate.lint import LintConfig, LintResult, lint_root
from ..validate.report import FORMATS, one_line, render_github, render_json, render_sarif, render_text
from ..validate.rules.loader import selects_a_rule
from ..validate.rules.registry import PROFILES


@dataclass(frozen=True, slots=True)
class Target:
    """One linted root: the folder, and the skills/files in it to lint (None: everything)."""

    root: Path
    only: frozenset[str] | None
    files: tuple[str, ...] = ()  # the file arguments (as given) that selected ``only``


def _codes(value: str | None, option: str) -> tuple[str, ...]:
    if not value:
        return ()
    codes = tuple(c.strip().upper() for c in value.split(",") if c.strip())
    for code in codes:
        if not selects_a_rule(code):
            raise click.BadParameter(f"no rule code starts with {code!r} (see `skillc rules`)", param_hint=option)
    return codes


def _lintable_file(path: Path) -> bool:
    """A file lint checks on its own: SKILL.md (any case), a convention file, a lightweight skill."""
    parent = path.parent
    return (path.name.lower() == "skill.md" or path.name.upper() in CONVENTION_UPPER or _is_manifest(path)
            or path.suffix == ".md" and (parent.name == ".skills" or parent.name == "skills" and parent.parent.name == ".claude"))


def _is_manifest(path: Path) -> bool:
    """A Claude Code plugin manifest (`.claude-plugin/marketplace.json`, `…/plugin.json`): rules G1xx."""
    return path.parent.name == MANIFEST_DIR and path.name in MANIFEST_NAMES


def owning_skill(path: Path) -> Path | None:
    """The SKILL.md of the skill a file belongs to (a reference, a script, an asset: the nearest folder
    above it holding one, unless that one is a fixture in a skill's assets/, references/ or scripts/),
    up to the repository's top; None when the file is in no skill."""
    owner: Path | None = None
    for folder in path.parents:
        found = next((folder / n for n in SKILL_FILE_NAMES if quiet_is_file(folder / n)), None)
        if found is not None:
            if owner is not None and owner.parent.relative_to(folder).parts[0] not in RESOURCE_DIRS:
                break  # (the one below is a skill of its own, nested in this one)
            owner = found
        if quiet_exists(folder / ".git"):
            break
    return owner


def _file_root(path: Path, cwd: Path) -> tuple[Path, str]:
    """The root a file argument is linted in, and its selector (skill dir or file path) there.  A
    file of a skill that is not its SKILL.md (pre-commit passes a changed reference) selects the
    skill: its secrets and links are the skill's findings."""
    absolute = Path(os.path.abspath(path))
    # A folder on the way reached through a symbolic link (`sk -> skills`): the walk never follows
    # links, so the file would be skipped and the run pass; lint it where it really is (its name
    # kept: a SKILL.md that is itself a link is an alias discovery reports).
    real_parent = Path(os.path.realpath(absolute.parent))
    if real_parent != absolute.parent:
        absolute = real_parent / absolute.name
    if not _lintable_file(absolute):
        absolute = owning_skill(absolute) or absolute
    is_skill_file = absolute.name.lower() == "skill.md"
    try:
        rel = absolute.relative_to(cwd)
        root = Path(".")
    except ValueError:
        # Outside the current directory: root at the folder above the skill, or above the .skills/
        # or .claude/skills/ the file is in, at any depth (`.skills/deep/five.md` is a lightweight
        # skill only seen from above .skills/).
        anchor = absolute.parent
        if is_skill_file or _is_manifest(absolute):  # (a manifest's paths start above .claude-plugin/)
            anchor = anchor.parent
        else:
            for up in (absolute.parent, *absolute.parent.parents):
                if up.name == ".skills":
                    anchor = up.parent
                    break
                if up.name == "skills" and up.parent.name == ".claude":
                    anchor = up.parent.parent
                    break
        root, rel = anchor, absolute.relative_to(anchor)
    rel_posix = rel.as_posix()
    if is_skill_file:
        parent = rel.parent.as_posix()
        return root, "" if parent == "." else parent
    return root, rel_posix


def targets(paths: tuple[str, ...], cwd: Path | None = None) -> list[Target]:
    """Turn PATH arguments into roots (see the module docstring).

    A folder inside another folder argument, and a file inside a folder argument, are dropped
    (already linted), so nothing is reported twice.
    """
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    dirs: list[Path] = []
    files: list[tuple[str, Path]] = []
    for p in paths or (".",):
        path = Path(p)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            kind = "is a broken symbolic link" if path.is_symlink() else "does not exist"
            raise click.BadParameter(f"path {p!r} {kind}", param_hint="PATH") from None
        except OSError:  # (a folder on the way that cannot be searched: lint reports D105 for the file)
            st = None
        (dirs.append(Path(os.path.normpath(path))) if st is not None and stat.S_ISDIR(st.st_mode)
         else files.append((p, path)))
    absolute = {d: os.path.abspath(d) for d in dirs}
    whole = [d for d in dict.fromkeys(dirs)
             if not any(o != d and absolute[o] != absolute[d] and _inside(absolute[d], absolute[o]) for o in dirs)]
    whole = list({absolute[d]: d for d in reversed(whole)}.values())[::-1]  # one per folder, first spelling
    partial: dict[Path, tuple[set[str], list[str]]] = {}
    for given, path in files:
        if any(_inside(os.path.abspath(path), absolute[d]) for d in whole):
            continue
        root, selector = _file_root(path, cwd)
        sel, names = partial.setdefault(root, (set(), []))
        sel.add(selector)
        names.append(given)
    out = [Target(root, None) for root in whole]
    out.extend(Target(root, frozenset(sel), tuple(names)) for root, (sel, names) in partial.items())
    return out


def _config_for(tgt: Target, config_path: str | None, overrides: dict) -> LintConfig:
    """The configuration of a target: --config, else the nearest one found from where the linted
    files are (for file arguments, their folder: the current directory may be above their repository),
    up to the repository's top."""
    start = tgt.root
    if tgt.only is not None:
        start = Path(os.path.commonpath([os.path.abspath(tgt.root / s) for s in tgt.only]))
        while not quiet_is_dir(start):
            start = start.parent
    cfg_file = read_config_file(Path(config_path)) if config_path else find_lint_config(start)
    return anchored(lint_config(cfg_file, **overrides), tgt.root)


def _use_color(output: str | None) -> bool:
    if output is not None:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


@click.command("lint")
# (metavar: the help and the errors call it PATH; unreadable: D105)
@click.argument("paths", nargs=-1, metavar="[PATH]...", type=click.Path(path_type=str, readable=False))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="Read [lint] from this skills.toml, or [tool.skillc.lint] from this pyproject.toml.")
@click.option("--profile", type=click.Choice(PROFILES),
              help="Rule set: recommended (default), spec (the Agent Skills specification exactly), claude "
                   "(what Claude-style uploaders accept).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text (path:line:col: CODE message), json, github (workflow annotations) or sarif (2.1.0).")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False),
              help="Write the report to this file instead of standard output.")
@click.option("--strict", is_flag=True, help="Warnings fail the run too (exit 1).")
@click.option("--select", help="Comma-separated rule codes or prefixes to run instead of the profile's (e.g. S3,B701).")
@click.option("--extend-select", help="Comma-separated codes or prefixes to add to the profile's rules (or to --select's).")
@click.option("--ignore", help="Comma-separated rule codes or prefixes to skip (added to the config's).")
@click.option("--fix", is_flag=True, help="Apply the safe fixes in place (BOM, CRLF, quoting a scalar…), then report "
                                           "what is left.")
@click.option("--diff", is_flag=True, help="Print the safe fixes as a unified diff and write nothing (exit 1 when "
                                            "there is something to fix).")
@click.option("--quiet", "-q", is_flag=True, help="Text format: print only the summary line.")
@click.option("--debug", is_flag=True, hidden=True, help="Show a traceback on internal errors (same as skillc --debug).")
def lint(paths, config_path, profile, fmt, output, strict, select, extend_select, ignore, fix, diff, quiet, debug):
    """Check skills, lightweight skill files and convention files.

    PATH is a repository or a folder of skills (default: the current directory), or a file
    (SKILL.md, a .skills/*.md file, CLAUDE.md…) to check just that skill or file, as pre-commit
    passes them. A file inside the current directory is reported relative to it. With one PATH,
    paths in the report are relative to it; with several, relative to the current directory.

    Output lines read `path:line:col: CODE message` (line 0: the whole file), then a summary.
    Exit status: 0 no errors (warnings allowed unless --strict), 1 findings fail the run, 2 usage
    or internal error. Nothing is written unless --fix (or --output) is given.

    Configuration comes from --config, else from the first skills.toml, .rkat/skills.toml or
    pyproject.toml ([tool.skillc.lint]) found in the linted folder or above it (up to the
    repository's top). `skillc rules` lists every rule; `skillc rules CODE` explains one.
    """
    if fix and diff:
        raise click.UsageError("use either --fix (write) or --diff (show), not both")
    if diff and fmt != "text":
        raise click.UsageError(f"--diff prints a unified diff; it cannot be written as --format {fmt}")
    overrides = {"profile": profile, "select": _codes(select, "--select"),
                 "extend_select": _codes(extend_select, "--extend-select"), "ignore": _codes(ignore, "--ignore")}
    tgts = targets(tuple(paths))
    cwd = Path.cwd()
    many = len(paths) > 1  # several arguments: paths relative to the current directory (even if they collapse)
    results: list[LintResult] = []
    shown: list[Diagnostic] = []
    file_fixes: list[tuple[Target, Any, str]] = []
    for tgt in tgts:
        result, root_fixes = _lint_target(tgt, _config_for(tgt, config_path, overrides), fix=fix, diff=diff)
        file_fixes.extend((tgt, f, path) for f, path in root_fixes)
        results.append(result)
        prefix = ""
        if many:
            rel = Path(os.path.relpath(result.root, cwd)).as_posix()
            prefix = "" if rel == "." else rel + "/"
        shown.extend(_prefixed(d, prefix) if prefix else d for d in result.diagnostics)
    if diff:
        _print_diff(file_fixes, output, many, cwd)
    fixed = sum(f.applied for _, f, _ in file_fixes) if fix else 0
    shown = [_redacted(d) for d in shown]
    color = _use_color(output)
    _emit(_report(fmt, results, shown, color=color, fixed=fixed, quiet=quiet, many=many, cwd=cwd), output, color)
    errors = sum(r.count(Severity.ERROR) for r in results)
    warnings = sum(r.count(Severity.WARNING) for r in results)
    sys.exit(1 if errors or (strict and warnings) else 0)


def _lint_target(tgt: Target, cfg: LintConfig, *, fix: bool, diff: bool) -> tuple[LintResult, list[tuple[Any, str]]]:
    """Lint one target; with --fix or --diff, also its safe fixes (each with the path it writes),
    and with --fix write them and report what is left."""
    result = lint_root(tgt.root, cfg, tgt.only, documents=fix or diff)  # fixes need the texts
    if tgt.only is not None:
        _note_unmatched(tgt, result, cfg)
    if not (fix or diff):
        return result, []
    from ..validate.fix import fix_item, write_fix, written_path

    root_fixes = [f for f in (fix_item(Path(result.root), li, cfg) for li in result.items) if f]
    if fix and root_fixes:
        written = []
        for f in root_fixes:
            try:
                write_fix(Path(result.root), f)
                written.append(f)
            except OSError as exc:  # (a read-only folder or file: the others are still fixed)
                click.echo(f"{one_line(f.path)}: cannot write the fix ({exc.strerror or exc}); the file is "
                           "unchanged", err=True)
        root_fixes = written
        result = lint_root(tgt.root, cfg, tgt.only)  # report what is left
    return result, [(f, written_path(Path(result.root), f)) for f in root_fixes]


def _print_diff(file_fixes: list[tuple[Target, Any, str]], output: str | None, many: bool, cwd: Path) -> NoReturn:
    """--diff: the safe fixes as one unified diff; exit 1 when there is something to fix."""
    out = "".join(f.diff(Path(os.path.relpath(t.root, cwd)).as_posix() if many else "", path)
                  for t, f, path in file_fixes)
    _emit(out, output, color=False)
    n = sum(f.applied for _, f, _ in file_fixes)
    if file_fixes:
        click.echo(f"{len(file_fixes)} file(s) would be changed by {n} safe fix(es); run with --fix to apply.",
                   err=True)
    else:
        click.echo("No safe fix to apply.", err=True)
    sys.exit(1 if file_fixes else 0)


def _report(fmt: str, results: list[LintResult], shown: list[Diagnostic], *, color: bool, fixed: int, quiet: bool,
            many: bool, cwd: Path) -> str:
    if fmt == "text":
        return render_text(results, [] if quiet else shown, color, fixed)
    if fmt == "json":
        return render_json(results, shown)
    # (annotations and SARIF are placed by paths from the repository: the current directory in CI;
    # with several arguments the paths are from there already, even when they collapse to one root)
    placed = shown if many else [_redacted(_from_cwd(d, results[0].root, cwd)) for d in shown]
    return (render_github if fmt == "github" else render_sarif)(results, placed)


def _redacted(d: Diagnostic) -> Diagnostic:
    """``d`` with a likely secret in its path or skill redacted, as messages are: a token can be a
    folder name, and the path printed starts with the argument's (CI logs and SARIF uploads keep it).
    (Control characters are escaped by each format's renderer.)"""
    if not secrets.scan(f"{d.path}\n{d.skill or ''}"):
        return d
    return replace(d, path=secrets.redact(d.path)[0], skill=secrets.redact(d.skill)[0] if d.skill else d.skill)


def _from_cwd(d: Diagnostic, root: str, cwd: Path) -> Diagnostic:
    """SARIF locations and GitHub annotations are relative to the current directory (the repository
    in CI), whatever the root."""
    rel = Path(os.path.relpath(root, cwd)).as_posix()
    return d if rel == "." else _prefixed(d, rel + "/")


def _prefixed(d: Diagnostic, prefix: str) -> Diagnostic:
    """``d`` with its path and its skill folder from the current directory (``prefix``: the root
    from there, with a trailing slash), so two roots' skills of one name stay apart."""
    def moved(p: str | None) -> str | None:
        return p if p is None else (prefix + p if p else prefix.rstrip("/") or ".")

    return replace(d, path=moved(d.path), skill=moved(d.skill))


def _note_unmatched(tgt: Target, result: LintResult, cfg: LintConfig) -> None:
    found = {li.item.path for li in result.items} | {li.item.skill_dir for li in result.items}
    found |= set(result.discovery.manifests)
    unread = [d.path for d in result.diagnostics if d.code == "D105"]  # (reported already: unreadable)
    # (a skill whose SKILL.md is a FIFO or device is selected by its folder; its D105 names the file)
    unread += [u.rpartition("/")[0] for u in unread if u.rpartition("/")[2].lower() == "skill.md"]
    missing = sorted(s for s in (tgt.only or ())
                     if s not in found and not any(s == u or s.startswith(u + "/") for u in unread))
    for sel in missing:
        # (pre-commit passes every changed file: only one named like a skill or convention file is
        # worth a note, e.g. a SKILL.md fixture under a skill's assets/)
        if (tgt.root / sel).is_dir() or _lintable_file(tgt.root / sel):
            why = ("matches an exclude glob of the configuration" if excluded_by(cfg.discovery, sel)
                   else "is not a skill or convention file skillc lints")
            click.echo(f"skillc: note: {one_line(sel or '.')} {why}; skipped", err=True)


def _emit(text: str, output: str | None, color: bool) -> None:
    # Bytes, not text: a --diff names a file whose name is not UTF-8 by its own bytes (surrogate
    # escapes), which patch must find, whatever encoding stdout has (reports hold none: `printable`).
    data = text.encode("utf-8", "surrogateescape")
    if output:
        try:
            Path(output).write_bytes(data)
        except OSError as exc:
            raise SkillcError(f"cannot write the report to {output}: {exc.strerror or exc}") from None
    else:
        click.echo(data if not color else text, nl=False, color=color)


__all__ = ["Target", "lint", "targets"]
