"""What the generated pages (``pages``, written in the build process) and the safe Markdown extension
(``markdown_safe``, run in the mkdocs child) agree on.

Kept apart from ``markdown_safe`` so that the build process, which only writes pages, does not
import Python-Markdown for a few names (≈ 25 ms of a 1,000-skill rebuild's docs site, on its
critical path)."""

from __future__ import annotations

import re

FILES_REFERENCE = "skillc-files"  # the link reference a skill page's relative links resolve against
FILES_DIR = "api/files/"  # where the bundle keeps each skill's files (the reference points below it)
TRUSTED_HTML_META = "skillc_html"  # front matter of a page that holds generated HTML blocks
HTML_START, HTML_END = "<!--skillc:html-->", "<!--/skillc:html-->"  # (lines around such a block)

# Bidirectional embeddings, overrides and isolates reorder the text after them: "\u202eevil" reads
# "live".  Untrusted text shows them as their code points instead (search.js does the same).
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible_bidi(text: str) -> str:
    """``text`` with each bidirectional control shown as ``[U+202E]``, so it cannot disguise text."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", text) if _BIDI.search(text) else text
