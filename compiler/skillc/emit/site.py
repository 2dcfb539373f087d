"""The minimal docs page (``index.html`` from ``templates/site/``): every collection and skill with
its provenance (repository, tier, what it shadowed), lint status and size.  Everything is
HTML-escaped (Jinja autoescape), and a Content-Security-Policy forbids scripts: skill text is
hostile.

``emit_site`` builds the full docs site (``skillc.site``: mkdocs + material, a page per skill and
collection, provenance, lint report, memory, search) instead when mkdocs and material are
importable; this page is the fallback of an install without the ``site`` extra, and says so in
its footer."""

from __future__ import annotations

from functools import cache
from urllib.parse import quote

from ..formatting import human_size
from ..resolve_types import EmitContext
from ..resources import template_dir, template_environment
from ..version import __version__
from .common import write
from .docsite import SITE_EXTRA_HINT, site_engine


@cache
def _environment():
    return template_environment(template_dir() / "site", autoescape=True, trim_blocks=True)


def emit_site(ctx: EmitContext) -> None:
    if not ctx.options.site:
        return
    if site_engine() == "mkdocs":  # the full docs site (skillc.site); else the minimal page below
        from .docsite import emit_mkdocs_site

        return emit_mkdocs_site(ctx)
    from .docsite.model import lint_verdicts

    res = ctx.resolution
    artifacts = ctx.collected.artifacts
    # (what the build records: its lint summary; the page read a "lint_status" it never set, so
    # every skill showed "ok")
    lint = lint_verdicts(ctx.options.lint_summary)
    shadowed: dict[str, list] = {}
    for sh in res.shadowed:
        shadowed.setdefault(sh.id, []).append(sh)
    rows = []
    for s in res.skills:
        art = artifacts.get(s.id)
        files = art.files if art is not None else [(f.path, f.sha256, f.size) for f in s.files]
        verdict, warnings = lint.get((s.repository.name, s.id), ("ok", 0))
        rows.append({
            "id": s.id, "url": quote(f"api/files/{s.id}/SKILL.md", safe="/"), "description": s.description,
            "repository": s.repository.name, "tier": s.repository.tier.value, "priority": s.repository.priority,
            "shadowed": shadowed.get(s.id, []), "lint": verdict, "warnings": warnings,
            "files": len(files), "size": human_size(sum(f[2] for f in files)),
            "archive": quote(art.archive[0], safe="/") if art is not None and art.archive else None,
        })
    html = _environment().get_template("index.html.j2").render(
        version=__version__, hint=SITE_EXTRA_HINT, skills=rows, collections=res.collections, excluded=res.excluded)
    write(ctx.out, "index.html", html.encode("utf-8"))
