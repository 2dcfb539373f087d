"""Parse stage: split a Markdown file into frontmatter and body without losing anything.

YAML is read from libyaml's event stream (``CSafeLoader``'s C parser when present) and the tree is
built here, iteratively: that bounds nesting depth and alias expansion before a hostile document
can exhaust the stack or memory, and it records the line and column of every key and scalar.
Scalars are typed the way a YAML 1.1 safe loader types them (so ``version: 2.0`` is a float), and
``Scalar`` keeps the text as written so rules can say what the author meant and quote it back.
"""

from __future__ import annotations

import codecs
import datetime
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from .model import Diagnostic, Document, Fix, Frontmatter, ItemKind, Position, Scalar, Severity, TextEdit

try:  # the C loader is several times faster; fall back when libyaml is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

YAML_LOADER = _Loader
MAX_FILE_BYTES = 8 * 1024 * 1024  # a SKILL.md above this is not parsed (the largest real one is 294 KB)
MAX_FRONTMATTER_BYTES = 256 * 1024
MAX_YAML_NODES = 10_000  # nodes after alias expansion
MAX_YAML_DEPTH = 64
MAX_BRACKET_DEPTH = 10_000  # pre-check before libyaml (see _flow_depth_exceeds)

_FENCE = re.compile(r"^---[ \t]*$")
_CONFLICT = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)
_CODE_FENCE = re.compile(r"^(```|~~~)")
_SIMPLE_KV = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):[ \t]+(?P<value>\S.*?)[ \t]*$")
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_TAG_PREFIX = "tag:yaml.org,2002:"
_RESOLVER = yaml.resolver.Resolver()


@dataclass(frozen=True, slots=True)
class _Ctx:
    path: str
    skill: str | None


def _diag(ctx: _Ctx, code: str, sev: Severity, line: int, col: int, msg: str, fix: Fix | None = None) -> Diagnostic:
    return Diagnostic(code, sev, ctx.path, line, col, msg, ctx.skill, fix)


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        offsets.append(i + 1)
        i = find("\n", i + 1)
    return offsets


class YamlLimitError(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.mark = mark


def _typed_scalar(tag: str, value: str, event: Any) -> Any:
    if tag == _TAG_PREFIX + "str":
        return value
    constructor = _CONSTRUCTOR.yaml_constructors.get(tag)
    if constructor is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"unsupported YAML tag {tag!r}; write the value as plain text", event.start_mark
        )
    return constructor(_CONSTRUCTOR, yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style))


def load_yaml(text: str, line_offset: int = 0) -> tuple[Any, dict, dict, list[tuple[str, Position]]]:
    """Parse one YAML document safely.

    Returns ``(data, key_positions, scalars, duplicate_keys)``.  Positions are 1-based and shifted by
    ``line_offset`` lines.  Raises ``yaml.YAMLError`` or ``YamlLimitError``.
    """
    loader = YAML_LOADER(text)
    keys: dict[tuple, Position] = {}
    scalars: dict[tuple, Scalar] = {}
    duplicates: list[tuple[str, Position]] = []
    anchors: dict[str, tuple[Any, int]] = {}
    node_count = 0

    def pos(mark: Any) -> Position:
        return Position(mark.line + 1 + line_offset, mark.column + 1)

    # Stack frames: [container, path, pending_key (for mappings), anchor, start_count, is_mapping, key_pos]
    stack: list[list[Any]] = []
    root: Any = None
    have_root = False

    def attach(value: Any, event: Any, size: int, scalar: Scalar | None) -> None:
        nonlocal root, have_root
        if not stack:
            root, have_root = value, True
            if scalar is not None:
                scalars[()] = scalar
            return
        frame = stack[-1]
        container, path = frame[0], frame[1]
        if frame[5]:  # mapping
            if frame[2] is None:
                # This value is a key.
                if not isinstance(value, str) or scalar is None:
                    raise yaml.constructor.ConstructorError(
                        None, None, "only plain text keys are supported in frontmatter", event.start_mark
                    )
                frame[2] = scalar.text
                frame[6] = scalar.position
                return
            key, key_pos = frame[2], frame[6]
            frame[2] = None
            if key in container:
                duplicates.append((key, key_pos))
                return  # the first occurrence wins; the duplicate is reported
            container[key] = value
            child = path + (key,)
        else:
            child = path + (len(container),)
            container.append(value)
            key_pos = pos(event.start_mark)
        keys[child] = key_pos
        if scalar is not None:
            scalars[child] = scalar

    while True:
        event = loader.get_event()
        if event is None:
            break
        etype = type(event)
        if etype is yaml.ScalarEvent:
            node_count += 1
            if stack and stack[-1][5] and stack[-1][2] is None and not event.anchor and event.tag is None:
                # Fast path for the most common event, a plain or quoted mapping key: only its text
                # and position are kept (keys are never typed).
                mark = event.start_mark
                stack[-1][2] = event.value
                stack[-1][6] = Position(mark.line + 1 + line_offset, mark.column + 1)
                continue
            if event.tag is None or event.tag == "!":
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            else:
                tag = event.tag
            is_key = bool(stack) and stack[-1][5] and stack[-1][2] is None
            value = event.value if is_key else _typed_scalar(tag, event.value, event)
            scalar = Scalar(
                tag.rsplit(":", 1)[-1],
                event.value,
                event.style or None,  # libyaml reports plain scalars as '', the Python parser as None
                pos(event.start_mark),
                pos(event.end_mark),
            )
            if event.anchor:
                anchors[event.anchor] = (value, 1)
            attach(value, event, 1, scalar)
        elif etype is yaml.MappingStartEvent or etype is yaml.SequenceStartEvent:
            node_count += 1
            if len(stack) >= MAX_YAML_DEPTH:
                raise YamlLimitError(f"YAML nesting deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
            if event.tag not in (None, "!", _TAG_PREFIX + "map", _TAG_PREFIX + "seq"):
                raise yaml.constructor.ConstructorError(
                    None, None, f"unsupported YAML tag {event.tag!r}", event.start_mark
                )
            is_map = etype is yaml.MappingStartEvent
            if stack and stack[-1][5] and stack[-1][2] is None:
                raise yaml.constructor.ConstructorError(
                    None, None, "only plain text keys are supported in frontmatter", event.start_mark
                )
            if stack:
                parent = stack[-1]
                path = parent[1] + ((parent[2],) if parent[5] else (len(parent[0]),))
            else:
                path = ()
            stack.append([{} if is_map else [], path, None, event.anchor, node_count, is_map, None])
        elif etype is yaml.MappingEndEvent or etype is yaml.SequenceEndEvent:
            frame = stack.pop()
            size = node_count - frame[4] + 1
            if frame[3]:
                anchors[frame[3]] = (frame[0], size)
            attach(frame[0], event, size, None)
        elif etype is yaml.AliasEvent:
            if event.anchor not in anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                )
            value, size = anchors[event.anchor]
            node_count += size
            if node_count > MAX_YAML_NODES:
                raise YamlLimitError(
                    f"YAML aliases expand to more than {MAX_YAML_NODES} nodes (an alias bomb?)", event.start_mark
                )
            attach(value, event, size, None)
        elif etype is yaml.DocumentStartEvent and have_root:
            raise yaml.composer.ComposerError(
                None, None, "expected a single document in the frontmatter", event.start_mark
            )
        if node_count > MAX_YAML_NODES:
            raise YamlLimitError(f"YAML has more than {MAX_YAML_NODES} nodes", event.start_mark)
    return root, keys, scalars, duplicates


def _flow_depth_exceeds(text: str, limit: int) -> bool:
    """Defence in depth before libyaml sees the text: absurd bracket nesting (``[[[[…``).

    ``load_yaml`` already stops at ``MAX_YAML_DEPTH`` levels while streaming events, so this only
    needs to catch pathological input; it counts brackets without regard to quoting, hence the
    generous ``limit`` (a quoted ``'[[['`` in a description must not trip it).
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth = max(0, depth - 1)
    return False


def _quote_fix(fm_text: str, fm_offset: int, line_index: int) -> Fix | None:
    """Offer to single-quote a ``key: value`` line whose value broke YAML (e.g. an unquoted ': ')."""
    lines = fm_text.split("\n")
    if not 0 <= line_index < len(lines):
        return None
    m = _SIMPLE_KV.match(lines[line_index])
    if not m:
        return None
    value = m.group("value")
    if value[0] in "'\"[{|>&*!%@`#-?" or value.startswith("- "):
        return None
    # The value must not continue on the next line (a multi-line plain scalar).
    if line_index + 1 < len(lines) and lines[line_index + 1].startswith(m.group("indent") + " "):
        return None
    start = fm_offset + sum(len(x) + 1 for x in lines[:line_index]) + m.start("value")
    quoted = "'" + value.replace("'", "''") + "'"
    return Fix(f"quote the value of {m.group('key')!r}", (TextEdit(start, start + len(value), quoted),))


def _decode(raw: bytes, ctx: _Ctx) -> tuple[str | None, list[Diagnostic]]:
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None, [_diag(ctx, "P211", Severity.ERROR, 1, 1, "file is UTF-16; save it as UTF-8")]
    if b"\x00" in raw[:8192]:
        return None, [_diag(ctx, "P211", Severity.ERROR, 0, 0, "binary file (contains NUL bytes), not UTF-8 text")]
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, [
            _diag(ctx, "P211", Severity.ERROR, line, col, f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}")
        ]


def parse_document(raw: bytes, path: str, kind: ItemKind = ItemKind.SKILL, skill: str | None = None) -> Document:
    """Parse one file's bytes.  Never raises: every problem becomes a diagnostic."""
    ctx = _Ctx(path, skill)
    digest = hashlib.sha256(raw).hexdigest()
    if len(raw) > MAX_FILE_BYTES:
        d = _diag(ctx, "P212", Severity.ERROR, 0, 0, f"file is {len(raw):,} bytes; files over {MAX_FILE_BYTES:,} bytes are not parsed")
        return Document(path, kind, digest, len(raw), "", None, "", 1, (d,))
    text, diags = _decode(raw, ctx)
    if text is None:
        return Document(path, kind, digest, len(raw), "", None, "", 1, tuple(diags))
    return _parse_text(text, digest, len(raw), ctx, kind)


def _parse_text(original: str, digest: str, size: int, ctx: _Ctx, kind: ItemKind) -> Document:
    diags: list[Diagnostic] = []
    text = original
    offset = 0  # characters of `original` before `text` (the BOM)
    if text.startswith("\ufeff"):
        diags.append(
            _diag(ctx, "P203", Severity.WARNING, 1, 1, "file starts with a UTF-8 byte-order mark",
                  Fix("remove the byte-order mark", (TextEdit(0, 1, ""),)))
        )
        text, offset = text[1:], 1
    if "\r" in text:
        crlf = text.count("\r\n")
        if crlf:
            first = text.find("\r\n")
            line, col = line_col(text, first)
            diags.append(
                _diag(ctx, "P204", Severity.WARNING, line, col, f"file uses CRLF line endings ({crlf} lines)",
                      Fix("convert line endings to LF", tuple(
                          TextEdit(m.start() + offset, m.start() + offset + 2, "\n")
                          for m in re.finditer("\r\n", text))))
            )
        text = text.replace("\r\n", "\n")
    # Exact offsets for quoting fixes only hold when nothing was normalised; --fix loops until stable.
    exact = offset == 0 and len(text) == len(original)
    for m in _CONFLICT.finditer(text):
        line, _ = line_col(text, m.start())
        diags.append(_diag(ctx, "P205", Severity.ERROR, line, 1, "git merge-conflict marker; resolve the conflict"))

    lines = text.split("\n")
    has_fm = bool(lines) and bool(_FENCE.match(lines[0]))
    frontmatter: Frontmatter | None = None
    body_line = 1
    body = original[offset:]
    if not has_fm:
        first_nonblank = next((i for i, l in enumerate(lines) if l.strip()), None)
        required = kind is not ItemKind.CONVENTION
        if first_nonblank is not None and _CODE_FENCE.match(lines[first_nonblank]) and first_nonblank + 1 < len(lines) and _FENCE.match(lines[first_nonblank + 1]):
            diags.append(_diag(ctx, "P206", Severity.ERROR, first_nonblank + 1, 1,
                               "the whole file is wrapped in a code fence; remove the ``` lines around the frontmatter"))
        elif first_nonblank is not None and first_nonblank > 0 and _FENCE.match(lines[first_nonblank]):
            diags.append(_diag(ctx, "P201", Severity.ERROR if required else Severity.WARNING, 1, 1,
                               f"frontmatter must start on line 1, found '---' on line {first_nonblank + 1}"))
        elif required:
            hint = ""
            if first_nonblank is not None and re.match(r"^[A-Za-z_-]+:\s", lines[first_nonblank]):
                hint = "; the file starts with YAML but has no '---' fences around it"
            diags.append(_diag(ctx, "P201", Severity.ERROR, 1, 1, "missing YAML frontmatter (a '---' line must open the file)" + hint))
        return Document(ctx.path, kind, digest, size, original, None, body, body_line, tuple(diags))

    close = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if close is None:
        diags.append(_diag(ctx, "P202", Severity.ERROR, 1, 1, "frontmatter opened on line 1 is never closed with '---'"))
        return Document(ctx.path, kind, digest, size, original, None, "", 1, tuple(diags))
    fm_text = "\n".join(lines[1:close])
    # Body: everything after the closing fence line, byte-exact from the original text.
    orig_lines = original[offset:].split("\n")
    body = "\n".join(orig_lines[close + 1 :])
    body_line = close + 2
    fm_offset = len(lines[0]) + 1  # offset of the frontmatter text inside `text`

    def finish() -> Document:
        return Document(ctx.path, kind, digest, size, original, frontmatter, body, body_line, tuple(diags))

    if any(d.code == "P205" and d.line <= close for d in diags):
        return finish()
    if len(fm_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        diags.append(_diag(ctx, "P213", Severity.ERROR, 2, 1, f"frontmatter is over {MAX_FRONTMATTER_BYTES:,} bytes"))
        return finish()
    tab_lines = [i for i, l in enumerate(lines[1:close], start=2) if l[: len(l) - len(l.lstrip(" \t"))].count("\t")]
    if tab_lines:
        for ln in tab_lines[:5]:
            diags.append(_diag(ctx, "P207", Severity.ERROR, ln, lines[ln - 1].index("\t") + 1,
                               "tab character in indentation; YAML allows only spaces"))
        return finish()
    if _flow_depth_exceeds(fm_text, MAX_BRACKET_DEPTH):
        diags.append(_diag(ctx, "P213", Severity.ERROR, 2, 1, f"YAML nesting deeper than {MAX_YAML_DEPTH} levels"))
        return finish()
    try:
        data, keys, scalars, dups = load_yaml(fm_text, line_offset=1)
    except YamlLimitError as exc:
        diags.append(_diag(ctx, "P213", Severity.ERROR, exc.mark.line + 2, exc.mark.column + 1, str(exc)))
        return finish()
    except yaml.reader.ReaderError as exc:
        line, col = line_col(fm_text, exc.position)
        diags.append(_diag(ctx, "P214", Severity.ERROR, line + 1, col,
                           f"control character U+{exc.character:04X} in frontmatter (mis-encoded text?)"))
        return finish()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark else 2
        col = mark.column + 1 if mark else 1
        problem = exc.problem or "invalid YAML"
        fix = None
        message = f"invalid YAML in frontmatter: {problem}"
        if exc.context:
            message += f" ({exc.context})"
        if "mapping values are not allowed" in problem:
            message = "invalid YAML in frontmatter: an unquoted ': ' inside a value; quote the value"
            if exact:
                fix = _quote_fix(fm_text, fm_offset, mark.line if mark else -1)
        elif "expected <block end>, but found '<scalar>'" in (problem or "") and exc.context_mark is not None:
            fix = _quote_fix(fm_text, fm_offset, exc.context_mark.line) if exact else None
        diags.append(_diag(ctx, "P209", Severity.ERROR, line, col, message, fix))
        return finish()
    except yaml.YAMLError as exc:  # pragma: no cover - every libyaml error is marked
        diags.append(_diag(ctx, "P209", Severity.ERROR, 2, 1, f"invalid YAML in frontmatter: {exc}"))
        return finish()
    except (ValueError, OverflowError) as exc:  # bad timestamps, huge ints
        diags.append(_diag(ctx, "P209", Severity.ERROR, 2, 1, f"invalid YAML value in frontmatter: {exc}"))
        return finish()
    for key, kpos in dups:
        diags.append(_diag(ctx, "P208", Severity.ERROR, kpos.line, kpos.column,
                           f"duplicate key {key!r} (the first value is used)"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        diags.append(_diag(ctx, "P210", Severity.ERROR, 2, 1,
                           f"frontmatter must be a YAML mapping of keys to values, found a {_type_name(data)}"))
        return finish()
    frontmatter = Frontmatter(data, keys, scalars, 1, close + 1)
    return finish()


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "date"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    if value is None:
        return "null"
    return "text"


type_name = _type_name
