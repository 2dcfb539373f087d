"""List items written for GitHub (CommonMark) re-indented for Python-Markdown (pure).

CommonMark puts a list item's content at the column after its marker (`- ` → 2, `1. ` → 3), so a
fenced block or a nested list indented 2 or 3 spaces belongs to the item.  Python-Markdown wants 4
spaces per level: there the same block leaves the list and the fence collapses into one line of
inline code (2 of 14 anthropics skills, 149 of 2,417 openclaw ones).  ``reindent(lines)`` moves
every line that CommonMark places inside an item to Python-Markdown's column for it, so both read
the same structure.  Lines outside lists, and the inside of top-level fences, are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])( {1,4})(?=\S)")
_RULE = re.compile(r"^ {0,3}([-*_])( *\1){2,} *$")
_FENCE = re.compile(r"^( *)(`{3,}|~{3,})")


@dataclass(frozen=True)
class _Item:
    source_col: int  # where CommonMark puts the item's content
    target_col: int  # where Python-Markdown wants it (4 per level)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _moved(line: str, item: _Item) -> str:
    extra = _indent(line) - item.source_col
    return " " * (item.target_col + max(extra, 0)) + line.lstrip(" ")


def reindent(lines: list[str]) -> list[str]:
    """``lines`` with list-item content at Python-Markdown's columns (see the module docstring)."""
    out: list[str] = []
    stack: list[_Item] = []
    fence: tuple[str, _Item | None] | None = None  # (closing run, the item it sits in)
    blank_before = True
    for line in lines:
        if fence is not None:
            closing, owner = fence
            body = line.lstrip(" ")
            out.append(_moved(line, owner) if owner is not None and line.strip() else line)
            if body.startswith(closing[0] * len(closing)) and not body.strip(closing[0]).strip():
                fence = None
                if owner is not None:
                    out.append("")  # (else Python-Markdown reads a next item as the paragraph's text)
                    blank_before = True
            continue
        if not line.strip():
            out.append(line)
            blank_before = True
            continue
        col = _indent(line)
        marker = _list_marker(line, stack)
        if marker is not None or blank_before:
            depth = len(stack)
            while stack and col < stack[-1].source_col:
                stack.pop()
            if marker is not None and len(stack) < depth and not blank_before:
                out.append("")  # (else Python-Markdown keeps an outer item in the inner list)
        owner = stack[-1] if stack and col >= stack[-1].source_col else None
        if marker is not None:
            width, gap = marker
            parent = owner.target_col if owner is not None else 0
            out.append(" " * parent + line.lstrip(" "))
            stack.append(_Item(col + width + gap, parent + 4))
        else:
            m = _FENCE.match(line)
            if m:
                fence = (m.group(2), owner)
                if owner is not None and not blank_before:
                    out.append("")  # (else the block stays inside the item's paragraph)
            out.append(_moved(line, owner) if owner is not None else line)
        blank_before = False
    return out


def _list_marker(line: str, stack: list[_Item]) -> tuple[int, int] | None:
    """(marker width, spaces after it) when ``line`` opens a list item, relative to its own indent."""
    col = _indent(line)
    base = stack[-1].source_col if stack and col >= stack[-1].source_col else 0
    if col - base > 3 or _RULE.match(line):
        return None  # (an indented code block or a thematic break, not an item)
    m = _MARKER.match(" " * (col - base) + line.lstrip(" "))
    if m is None:
        return None
    gap = len(m.group(3))
    return len(m.group(2)), (1 if gap > 4 else gap)
