"""Safe fixes: apply the edits attached to diagnostics, re-check, repeat until stable."""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .lint import LintConfig, LintedItem, active_rules, check_document, finalize
from .model import Diagnostic, Fix, TextEdit
from .parse import parse_document
from .rules.registry import RuleContext

MAX_PASSES = 8


@dataclass(frozen=True, slots=True)
class FileFix:
    path: str  # relative to the linted root
    before: str
    after: str
    applied: int

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


def apply_edits(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """Apply whole fixes whose edits do not overlap an earlier fix's; return (text, fixes applied)."""
    chosen: list[TextEdit] = []
    applied = 0
    taken: list[tuple[int, int]] = []
    for fix in fixes:
        spans = [(e.start, e.end) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts) for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        chosen.extend(fix.edits)
        applied += 1
    for edit in sorted(chosen, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text, applied


def fix_item(root: Path, linted: LintedItem, config: LintConfig) -> FileFix | None:
    rules = active_rules(config)
    doc, diags = linted.document, list(linted.diagnostics)
    before = doc.text
    text, total = before, 0
    for _ in range(MAX_PASSES):
        fixes = [d.fix for d in diags if d.fix is not None]
        if not fixes:
            break
        text, n = apply_edits(text, fixes)
        if n == 0:
            break
        total += n
        doc = parse_document(text.encode("utf-8"), doc.path, doc.kind, linted.item.skill_dir)
        ctx = RuleContext(linted.item, doc, root, config.settings, config.profile)
        diags = finalize(list(doc.diagnostics) + check_document(ctx, rules), config)
    if total == 0 or text == before:
        return None
    return FileFix(linted.item.path, before, text, total)


def write_fix(root: Path, fix: FileFix) -> None:
    """Replace one file atomically (write a sibling, then rename), keeping its permissions."""
    target = root / fix.path
    mode = target.stat().st_mode
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".skillc-fix-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(fix.after)
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["FileFix", "apply_edits", "fix_item", "write_fix", "Diagnostic"]
