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


def plain_scalar_span(ctx: RuleContext, scalar: Scalar) -> tuple[int, int] | None:
    """Where a plain one-line scalar stands in the file, as (start, end) offsets; None where it is
    quoted, spans lines, or the file is not normalised (offsets are only exact then; the BOM/CRLF
    fixes run first)."""
    text = ctx.document.text
    if scalar.style is not None or scalar.position.line != scalar.end.line:
        return None
    if text.startswith("\ufeff") or "\r" in text:
        return None
    start = offset_of(text, scalar.position.line, scalar.position.column)
    end = offset_of(text, scalar.end.line, scalar.end.column)
    return (start, end) if text[start:end] == scalar.text else None


def quote_scalar_fix(ctx: RuleContext, scalar: Scalar) -> Fix | None:
    """Single-quote a plain one-line scalar so YAML reads it as text (``2.0`` → ``'2.0'``)."""
    span = plain_scalar_span(ctx, scalar)
    if span is None:
        return None
    start, end = span
    return Fix(f"quote {scalar.text!r} as text", (TextEdit(start, end, "'" + scalar.text.replace("'", "''") + "'"),))


def rename_in_scalar_fix(ctx: RuleContext, scalar: Scalar, old: str, new: str) -> Fix | None:
    """Replace the word ``old`` by ``new`` inside a plain one-line scalar (``read`` → ``Read`` in
    ``allowed-tools: read grep``); None where the scalar is quoted, spans lines or moved."""
    span = plain_scalar_span(ctx, scalar)
    if span is None:
        return None
    start, end = span
    edits = tuple(TextEdit(start + m.start(), start + m.end(), new)
                  for m in re.finditer(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])", scalar.text))
    return Fix(f"write {old!r} as {new!r}", edits) if edits else None
