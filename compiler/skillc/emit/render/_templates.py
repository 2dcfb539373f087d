"""The Jinja environment the renderers share (templates in ``templates/render/``).

Byte-exact output: no autoescaping (each template escapes explicitly with the filter its framework
uses), block tags trimmed, and the template file's single final newline dropped, so a template file
ends with a newline while the rendered text ends exactly where the framework's output ends.
"""

from __future__ import annotations

import html
import re
from functools import cache

from ...resources import template_dir, template_environment


def xml_escape(text: str) -> str:
    """Meerkat's escaping (renderer.rs): ``& < > " '`` in that order; ``'`` becomes ``&apos;``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


# What XML 1.0 cannot hold at all, even as a character reference (its `Char` production).
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_chars(text: str) -> str:
    """``text`` with each character XML 1.0 cannot hold replaced by U+FFFD, for a file that XML
    parsers read (``api/inventory.xml``).  Lint refuses such characters in frontmatter (P214); this
    keeps the file well-formed when that rule is ignored."""
    return _NOT_XML_CHAR.sub("\ufffd", text)


def html_escape(text: str) -> str:
    """skills-ref's escaping: Python ``html.escape(quote=True)`` (``'`` becomes ``&#x27;``)."""
    return html.escape(text, quote=True)


@cache
def environment():
    env = template_environment(template_dir() / "render", trim_blocks=True)
    env.filters["xml"] = xml_escape
    env.filters["html"] = html_escape
    return env


def render(name: str, **values: object) -> str:
    return environment().get_template(name).render(**values)
