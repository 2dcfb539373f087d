"""The minimal docs page (``index.html`` from ``templates/site/``): every collection and skill with
its provenance (repository, tier, what it shadowed), lint status and size.  Everything is
HTML-escaped (Jinja autoescape), and a Content-Security-Policy forbids scripts: skill text is
hostile."""

from __future__ import annotations

from functools import cache
from urllib.parse import quote

from .. import __version__
from ..resolve_types import EmitContext
from ..resources import template_dir
from .common import write


@cache
def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir() / "site")), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def human_size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def emit_site(ctx: EmitContext) -> None:
    if not ctx.options.get("site", True):
        return
    res = ctx.resolution
    artifacts = ctx.options.get("artifacts") or {}
    lint = ctx.options.get("lint_status") or {}
    shadowed: dict[str, list] = {}
    for sh in res.shadowed:
        shadowed.setdefault(sh.id, []).append(sh)
    rows = []
    for s in res.skills:
        art = artifacts.get(s.id)
        files = art.files if art is not None else [(f.path, f.sha256, f.size) for f in s.files]
        verdict, warnings = lint.get(s.id, ("ok", 0))
        rows.append({
            "id": s.id, "url": quote(f"api/files/{s.id}/SKILL.md", safe="/"), "description": s.description,
            "repository": s.repository.name, "tier": s.repository.tier.value, "priority": s.repository.priority,
            "shadowed": shadowed.get(s.id, []), "lint": verdict, "warnings": warnings,
            "files": len(files), "size": human_size(sum(f[2] for f in files)),
            "archive": quote(art.archive[0], safe="/") if art is not None and art.archive else None,
        })
    html = _environment().get_template("index.html.j2").render(
        version=__version__, skills=rows, collections=res.collections, excluded=res.excluded)
    write(ctx.out, "index.html", html.encode("utf-8"))
