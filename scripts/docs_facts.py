"""Check that every paragraph of an earlier README is still said somewhere: in README.md or docs/.

    git show <commit>:README.md > /tmp/README.old.md
    python scripts/docs_facts.py /tmp/README.old.md

Issue 18 moved the 91 KB README into the docs site; this is how the move was checked to lose
nothing.  Each paragraph, list item, table row or code block of the old file (markers and headings
aside) must appear in the new text with its whitespace collapsed and its link targets ignored
(a link's target changes when its page moves).  Prints the paragraphs not found; exit 1 if any.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_MARKER = re.compile(r"^<!-- [^>]* -->$")


def normalise(text: str) -> str:
    return " ".join(_LINK_TARGET.sub("]()", text).split())


def blocks(markdown: str) -> list[str]:
    """Paragraphs and code blocks (a fenced block is one, blank lines and all); headings and HTML
    comment markers are left out (page titles are rewritten when a section becomes a page)."""
    out: list[str] = []
    current: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and not line.strip() and not line.startswith("```"):
            out.append("\n".join(current))
            current = []
            continue
        if not fenced and _MARKER.match(line.strip()):
            continue  # (a section marker sits on the line next to its first or last paragraph)
        current.append(line)
    out.append("\n".join(current))
    return [b for b in out if b.strip() and not b.startswith("#")]


def missing(old: str, new_texts: list[str]) -> list[str]:
    haystack = "\n".join(normalise(t) for t in new_texts)
    return [b for b in blocks(old) if normalise(b) not in haystack]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    old = Path(argv[0]).read_text("utf-8")
    pages = [PROJECT / "README.md", *sorted((PROJECT / "docs").rglob("*.md"))]
    lost = missing(old, [p.read_text("utf-8") for p in pages])
    total = len(blocks(old))
    for block in lost:
        print("NOT FOUND:", block[:300].replace("\n", " ⏎ "))
    print(f"{total - len(lost)} of {total} blocks of {argv[0]} found in README.md and {len(pages) - 1} docs pages")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
