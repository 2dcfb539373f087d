"""The Markdown extensions the site renders skill text with, declared once: ``mkdocs.yml`` is
written from ``EXTENSIONS`` (``yaml_entries``) and tests build the same ``Markdown`` (``markdown``).

Bodies read as on GitHub: fenced code anywhere (``pymdownx.superfences``, also inside list items,
which ``skillc.emit.docsite.lists`` re-indents to Python-Markdown's columns), highlighted by Pygments into
CSS classes (``pymdownx.highlight``; no inline style, so the CSP's rules hold), GitHub's heading
anchors (``slugify``).  ``skillc.emit.docsite.markdown_safe`` comes last: raw HTML stays text, script URLs
are dropped, whatever the extensions before it produce.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

SAFE = "skillc.emit.docsite.markdown_safe"


def slugify(text: str, sep: str) -> str:
    """GitHub's anchors: letters of any script kept, ``&`` dropped, spaces to ``-``, lower case."""
    from pymdownx.slugs import slugify as make

    return make(case="lower")(text, sep)


EXTENSIONS: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("toc", {"permalink": True, "slugify": slugify}),
    ("tables", {}),
    ("pymdownx.superfences", {}),
    # guess_lang off: a fence without a language is shown as text (guessing is slow and wrong on prose)
    ("pymdownx.highlight", {"use_pygments": True, "guess_lang": False, "pygments_lang_class": True}),
    ("admonition", {}),
    ("sane_lists", {}),
    (SAFE, {}),
)


def _yaml_value(value: Any) -> str:
    if isinstance(value, Callable):  # type: ignore[arg-type]
        return f"!!python/name:{value.__module__}.{value.__qualname__}"
    return json.dumps(value, ensure_ascii=False)  # (JSON is YAML)


def yaml_entries(published: str, pages: str = "") -> list[str]:
    """The ``markdown_extensions:`` list of ``mkdocs.yml``, one line each; ``published`` lists the
    files below ``api/files/`` a body may link, ``pages`` those with a page of their own
    (``markdown_safe``'s options)."""
    lines = []
    for name, config in EXTENSIONS:
        options = {**config, "published": published, "pages": pages} if name == SAFE else config
        if not options:
            lines.append(f"  - {name}")
            continue
        lines.append(f"  - {name}:")
        lines.extend(f"      {key}: {_yaml_value(value)}" for key, value in options.items())
    return lines


def markdown(published: str = "", pages: str = ""):
    """A ``Markdown`` converter configured as the site's (for tests and the render floor)."""
    import markdown as md

    configs = {name: dict(config) for name, config in EXTENSIONS if config}
    configs[SAFE] = {"published": published, "pages": pages}
    return md.Markdown(extensions=[name for name, _ in EXTENSIONS], extension_configs=configs)
