"""Routing configs for static hosts (templates in ``templates/routing/``).

A static host cannot map both ``/api/skills`` (the list) and ``/api/skills/<encoded id>`` from files
alone, and most decode ``%2F`` before looking a file up.  The configs send ``/api/skills`` to
``api/skills.json``, look documents up by the *raw* request path (so ``a%2Fb`` finds the file named
``a%2Fb``), set JSON content types, answer unknown skills with a JSON 404, and map
``/.well-known/agent-skills/<id>/<path>`` to ``api/files/<id>/<path>``.

* ``_routing/nginx.conf`` — a ``server`` block (edit ``listen`` and ``root``);
* ``_routing/Caddyfile`` — a site block for Caddy 2;
* ``_redirects`` and ``_headers`` — Netlify / Cloudflare Pages rules and content types, at the bundle
  root where those hosts read them.
"""

from __future__ import annotations

from functools import cache

from ..resolve_types import EmitContext
from ..resources import template_dir, template_environment
from .common import write

DEFAULT_ROOT = "/srv/skillc"
DEFAULT_LISTEN = "80"


@cache
def _environment():
    return template_environment(template_dir() / "routing", keep_trailing_newline=True)


def render_routing(name: str, *, root: str = DEFAULT_ROOT, listen: str = DEFAULT_LISTEN,
                   server_name: str = "_") -> str:
    """Render one routing template (``nginx.conf``, ``Caddyfile`` or ``_redirects``)."""
    if any(c in root for c in ';{}"\'\n\\') or any(c in listen for c in ';{}"\'\n\\ '):
        raise ValueError("root and listen must not contain quotes, braces, semicolons or newlines")
    return _environment().get_template(name + ".j2").render(root=root, listen=listen, server_name=server_name)


def emit_routing(ctx: EmitContext) -> None:
    write(ctx.out, "_routing/nginx.conf", render_routing("nginx.conf").encode("utf-8"))
    write(ctx.out, "_routing/Caddyfile", render_routing("Caddyfile").encode("utf-8"))
    write(ctx.out, "_redirects", render_routing("_redirects").encode("utf-8"))
    write(ctx.out, "_headers", render_routing("_headers").encode("utf-8"))
