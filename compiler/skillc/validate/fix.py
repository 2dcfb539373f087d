"""Safe fixes: apply the edits attached to diagnostics, re-check, repeat until stable.

Only rules that attach a ``Fix`` to a diagnostic are fixed, and those fixes are mechanical (remove
a BOM, CRLF → LF, quote a scalar that broke YAML or was typed as a number).  ``fix_item`` is pure:
it returns the new text; ``write_fix`` is the only function here that writes, and it replaces one
file atomically, never through a symbolic link and never outside the linted root.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import SkillcError
from ..model import Diagnostic, Fix, ItemKind, TextEdit
from ..parse.document import parse_document
from .lint import LintConfig, LintedItem, active_rules, check_document, finalize
from .rules.registry import RuleContext

MAX_PASSES = 10


@dataclass(frozen=True, slots=True)
class FileFix:
    path: str  # relative to the linted root
    before: str
    after: str
    applied: int  # fixes applied over all passes

    def diff(self, prefix: str = "", path: str | None = None) -> str:
        """A unified diff (``a/PATH`` → ``b/PATH``); ``prefix`` is prepended to the path, ``path``
        (``written_path``: where a link leads) names the file instead of the reported one."""
        path = path or self.path
        path = f"{prefix}/{path}" if prefix and prefix != "." else path
        out = []
        for line in difflib.unified_diff(_lines(self.before), _lines(self.after),
                                         fromfile=_diff_name(f"a/{path}"), tofile=_diff_name(f"b/{path}")):
            out.append(line)
            if not line.endswith("\n"):  # (a file's last line, in the old or the new text)
                out.append("\n\\ No newline at end of file\n")
        return "".join(out)


def _diff_name(name: str) -> str:
    """``name`` in a ``---``/``+++`` line as git writes it, so `git apply` and GNU patch read it back:
    C-quoted when it holds a control character, a quote or a backslash (a line break would end the
    header, a tab the name); else followed by a tab when it holds a space (patch reads a bare name
    up to whitespace, expecting a date after it)."""
    if _NEEDS_QUOTE.search(name):
        return '"' + _NEEDS_QUOTE.sub(_c_escape, name) + '"'
    return name + "\t" if " " in name else name


def _c_escape(m: re.Match[str]) -> str:
    c = m.group()
    return _C_ESCAPES.get(c) or f"\\{ord(c):03o}"


_NEEDS_QUOTE = re.compile(r'[\x00-\x1f\x7f"\\]')
_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
              '"': '\\"', "\\": "\\\\"}


def _lines(text: str) -> list[str]:
    """Lines as diff and patch see them: split at LF only (a CR, a form feed or U+2028 is text)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def apply_edits(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """Apply whole fixes whose edits do not overlap an earlier fix's; return (text, fixes applied)."""
    chosen: list[TextEdit] = []
    applied = 0
    taken: list[tuple[int, int]] = []
    for fix in fixes:
        spans = [(e.start, e.end) for e in fix.edits]
        if any(not 0 <= s <= e <= len(text) for s, e in spans):
            continue  # stale offsets: never corrupt the file
        if any((s < te and ts < e) or s == ts for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        chosen.extend(fix.edits)
        applied += 1
    for edit in sorted(chosen, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text, applied


def fix_item(root: Path, linted: LintedItem, config: LintConfig) -> FileFix | None:
    """Apply the safe fixes of one linted file until none is left (or ``MAX_PASSES``)."""
    rules = active_rules(config)
    doc, diags = linted.document, list(linted.diagnostics)
    before = doc.text
    text, total = before, 0
    seen = {text}
    for _ in range(MAX_PASSES):
        fixes = [d.fix for d in diags if d.fix is not None]
        if not fixes:
            break
        new, n = apply_edits(text, fixes)
        if n == 0 or new in seen:
            break  # nothing applicable, or a cycle: stop with the last good text
        text, total = new, total + n
        seen.add(text)
        doc = parse_document(text.encode("utf-8"), doc.path, doc.kind, _skill_of(linted))
        ctx = RuleContext(linted.item, doc, root, config.settings, config.profile)
        diags = finalize(list(doc.diagnostics) + check_document(ctx, rules), config)
    if total == 0 or text == before:
        return None
    return FileFix(linted.item.path, before, text, total)


def _skill_of(linted: LintedItem) -> str:
    return linted.item.skill_dir if linted.item.kind is ItemKind.SKILL else linted.item.path


def _real(root: Path, fix: FileFix) -> tuple[str, str]:
    """The real paths of ``root`` and of the file ``fix`` writes, checked to lie inside it."""
    root_real = os.path.realpath(root)
    target = os.path.realpath(os.path.join(root, fix.path))
    if target != root_real and not target.startswith(root_real + os.sep):
        raise SkillcError(f"{fix.path}: refusing to write outside the linted folder ({target})")
    return root_real, target


def written_path(root: Path, fix: FileFix) -> str:
    """The file ``write_fix`` writes, relative to ``root``: the reported path, or where a SKILL.md
    that is a symbolic link leads (a diff must name it: git apply and patch refuse to patch a link)."""
    try:
        root_real, target = _real(root, fix)
    except SkillcError:  # (outside: --fix refuses it and says so; a diff keeps the reported name)
        return fix.path
    return Path(os.path.relpath(target, root_real)).as_posix()


def write_fix(root: Path, fix: FileFix) -> None:
    """Replace one file atomically (write a sibling, then rename), keeping its permissions.

    A file reached through a symbolic link is written at its real path, which must lie inside
    ``root`` (discovery never hands out links that leave it; this re-checks).
    """
    root_real, target = _real(root, fix)
    mode = os.stat(target).st_mode
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".skillc-fix-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(fix.after)
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["Diagnostic", "FileFix", "apply_edits", "fix_item", "write_fix", "written_path"]
