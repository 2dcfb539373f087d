"""``skillc lint``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..config import find_config, lint_config, read_config_file
from ..errors import SkillcError
from ..lint import LintResult, lint_root
from ..model import Diagnostic, Severity
from ..report import FORMATS, render_github, render_json, render_sarif, render_text
from ..rules.registry import PROFILES


def _codes(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(c.strip().upper() for c in value.split(",") if c.strip())


def _roots(paths: tuple[str, ...]) -> list[tuple[Path, set[str] | None]]:
    """Each PATH is a root; a file argument lints its skill inside the current directory."""
    roots: dict[Path, set[str] | None] = {}
    cwd = Path.cwd()
    for p in paths or (".",):
        path = Path(p)
        if not path.exists() and not path.is_symlink():
            raise click.BadParameter(f"path {p!r} does not exist", param_hint="PATH")
        if path.is_dir():
            roots[path] = None
            continue
        absolute = path.resolve().parent
        try:
            rel = absolute.relative_to(cwd.resolve()).as_posix()
            root = Path(".")
        except ValueError:
            root, rel = absolute.parent, absolute.name
        rel = "" if rel == "." else rel
        if roots.get(root, set()) is not None:
            roots.setdefault(root, set()).add(rel)  # type: ignore[union-attr]
            roots[root].add(path.as_posix() if root == Path(".") else f"{rel}/{path.name}")  # type: ignore[union-attr]
    return list(roots.items())


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="Read [lint] from this skills.toml or [tool.skillc.lint] from this pyproject.toml.")
@click.option("--profile", type=click.Choice(PROFILES),
              help="Rule set: recommended (default), spec (the Agent Skills specification exactly), claude.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="Output format.")
@click.option("--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write the report to this file instead of standard output.")
@click.option("--strict", is_flag=True, help="Warnings fail the run too (exit 1).")
@click.option("--select", help="Comma-separated rule codes or prefixes to run instead of the profile's (e.g. S3,B701).")
@click.option("--extend-select", help="Comma-separated codes or prefixes to add to the profile's rules.")
@click.option("--ignore", help="Comma-separated rule codes or prefixes to skip.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place (BOM, line endings, quoting…).")
@click.option("--diff", is_flag=True, help="Show the safe fixes as a unified diff; write nothing.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line (text format).")
def lint(paths, config_path, profile, fmt, output, strict, select, extend_select, ignore, fix, diff, quiet):
    """Check skills, lightweight skill files and convention files.

    PATH is a repository or a folder of skills (default: the current directory), or a SKILL.md
    file to check one skill. Output lines read `path:line:col: CODE message`, with paths relative
    to the linted root. Exit status: 0 no errors (warnings allowed unless --strict), 1 findings
    fail the run, 2 usage or internal error.

    Configuration comes from --config, else from skills.toml, .rkat/skills.toml or
    pyproject.toml ([tool.skillc.lint]) in the linted folder. `skillc rules` lists every rule.
    """
    from ..fix import fix_item, write_fix

    roots = _roots(paths)
    results: list[LintResult] = []
    shown: list[Diagnostic] = []
    fixes = []
    for root, only in roots:
        cfg_file = read_config_file(Path(config_path)) if config_path else find_config(root)
        cfg = lint_config(cfg_file, profile=profile, select=_codes(select), extend_select=_codes(extend_select),
                          ignore=_codes(ignore))
        result = lint_root(root, cfg, only)
        if fix or diff:
            root_fixes = [(root, f) for f in (fix_item(Path(result.root), li, cfg) for li in result.items) if f]
            fixes.extend(root_fixes)
            if fix and root_fixes:
                for _, f in root_fixes:
                    write_fix(Path(result.root), f)
                result = lint_root(root, cfg, only)  # report what is left
        results.append(result)
        prefix = ""
        if len(roots) > 1:
            prefix = os.path.relpath(result.root).replace(os.sep, "/") + "/"
        for d in result.diagnostics:
            shown.append(d if not prefix or prefix == "./" else _prefixed(d, prefix))

    if diff:
        out = "".join(f.diff() for _, f in fixes)
        click.echo(out, nl=False)
        click.echo(f"{len(fixes)} file(s) would be fixed ({sum(f.applied for _, f in fixes)} fixes).", err=True)
        sys.exit(1 if fixes else 0)

    fixed = sum(f.applied for _, f in fixes) if fix else 0
    if fmt == "text":
        color = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        text = render_text(results, [] if quiet else shown, color, fixed)
    elif fmt == "json":
        text = render_json(results, shown)
    elif fmt == "github":
        text = render_github(results, shown)
    else:
        src = Path(results[0].root).as_uri() if len(results) == 1 else Path.cwd().as_uri()
        text = render_sarif(results, shown, src)
    if output:
        Path(output).write_text(text, "utf-8")
    else:
        click.echo(text, nl=False)
    errors = sum(r.count(Severity.ERROR) for r in results)
    warnings = sum(r.count(Severity.WARNING) for r in results)
    sys.exit(1 if errors or (strict and warnings) else 0)


def _prefixed(d: Diagnostic, prefix: str) -> Diagnostic:
    from dataclasses import replace

    return replace(d, path=prefix + d.path)


__all__ = ["lint", "SkillcError"]
