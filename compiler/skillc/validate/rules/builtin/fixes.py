"""Helpers that build safe fixes from parse positions."""

from __future__ import annotations

import re

from ....model import Fix, Scalar, TextEdit
from ..registry import RuleContext


def offset_of(text: str, line: int, column: int) -> int:
    """Character offset of a 1-based line and column."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def quote_scalar_fix(ctx: RuleContext, scalar: Scalar) -> Fix | None:
    """Single-quote a plain one-line scalar so YAML reads it as text (``2.0`` → ``'2.0'``)."""
    text = ctx.document.text
    if scalar.style is not None or scalar.position.line != scalar.end.line:
        return None
    if text.startswith("\ufeff") or "\r" in text:
        return None  # offsets are only exact in a normalised file; the BOM/CRLF fixes run first
    start = offset_of(text, scalar.position.line, scalar.position.column)
    end = offset_of(text, scalar.end.line, scalar.end.column)
    if text[start:end] != scalar.text:
        return None
    return Fix(f"quote {scalar.text!r} as text", (TextEdit(start, end, "'" + scalar.text.replace("'", "''") + "'"),))


def rename_in_scalar_fix(ctx: RuleContext, scalar: Scalar, old: str, new: str) -> Fix | None:
    """Replace the word ``old`` by ``new`` inside a plain one-line scalar (``read`` → ``Read`` in
    ``allowed-tools: read grep``); None where the scalar is quoted, spans lines or moved."""
    text = ctx.document.text
    if scalar.style is not None or scalar.position.line != scalar.end.line:
        return None
    if text.startswith("\ufeff") or "\r" in text:
        return None  # offsets are only exact in a normalised file; the BOM/CRLF fixes run first
    start = offset_of(text, scalar.position.line, scalar.position.column)
    end = offset_of(text, scalar.end.line, scalar.end.column)
    if text[start:end] != scalar.text:
        return None
    edits = tuple(TextEdit(start + m.start(), start + m.end(), new)
                  for m in re.finditer(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])", scalar.text))
    return Fix(f"write {old!r} as {new!r}", edits) if edits else None
