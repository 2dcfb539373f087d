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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..model import (
    Diagnostic,
    Document,
    Fix,
    Frontmatter,
    ItemKind,
    Position,
    RuleRef,
    Scalar,
    Severity,
    TextEdit,
    plural,
)
from ..textscan import contains
from . import rules

try:  # the C loader is several times faster; fall back when libyaml is missing
    from yaml import CSafeLoader as _Loader
    from yaml.cyaml import CParser as _EventParser  # events only: no constructor or resolver to set up
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    _EventParser = _Loader  # type: ignore[assignment,misc]

YAML_LOADER = _Loader
MAX_FILE_BYTES = 8 * 1024 * 1024  # a SKILL.md above this is not parsed (the largest real one is 294 KB)
MAX_FRONTMATTER_BYTES = 256 * 1024
MAX_YAML_NODES = 10_000  # nodes after alias expansion
MAX_YAML_DEPTH = 64
MAX_BRACKET_DEPTH = 10_000  # pre-check before libyaml (see _flow_depth_exceeds)

_FENCE = re.compile(r"^---[ \t]*$")
_FENCE_LINE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_CONFLICT = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)
_CODE_FENCE = re.compile(r"^(```|~~~)")
_SIMPLE_KV = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):[ \t]+(?P<value>\S.*?)[ \t]*$")
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_TAG_PREFIX = "tag:yaml.org,2002:"
_STR_TAG = _TAG_PREFIX + "str"
_ScalarEvent, _AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
_MappingStartEvent, _MappingEndEvent = yaml.MappingStartEvent, yaml.MappingEndEvent
_SequenceStartEvent, _SequenceEndEvent = yaml.SequenceStartEvent, yaml.SequenceEndEvent
_DocumentStartEvent = yaml.DocumentStartEvent


@dataclass(frozen=True, slots=True)
class _Ctx:
    path: str
    skill: str | None


def _diag(ctx: _Ctx, rule: RuleRef, line: int, col: int, msg: str, fix: Fix | None = None, *,
          severity: Severity | None = None) -> Diagnostic:
    return rule.diagnostic(ctx.path, line, col, msg, ctx.skill, fix, severity=severity)


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


# Tags a scalar may carry (``!!set``, ``!!omap``… name collections: on a scalar they are errors).
_SCALAR_TAGS = frozenset(_TAG_PREFIX + t for t in ("null", "bool", "int", "float", "binary", "timestamp", "str"))


def _typed_scalar(tag: str, value: str, event: Any) -> Any:
    if tag == _STR_TAG:
        return value
    constructor = _CONSTRUCTOR.yaml_constructors.get(tag) if tag in _SCALAR_TAGS else None
    if constructor is None:
        raise yaml.constructor.ConstructorError(
            None, None, f"unsupported YAML tag {tag!r}; write the value as plain text", event.start_mark
        )
    try:
        return constructor(_CONSTRUCTOR, yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style))
    except (IndexError, KeyError, AttributeError, TypeError):  # e.g. ``!!int ''``, ``!!bool maybe``
        raise yaml.constructor.ConstructorError(
            None, None, f"{value!r} is not a valid {tag.rsplit(':', 1)[-1]}", event.start_mark
        ) from None
    except (ValueError, OverflowError) as exc:  # a plain `2024-13-45` (month 13), `!!float 1x`
        # (marked here, so the error is placed at the value, not at the frontmatter's first line)
        raise yaml.constructor.ConstructorError(
            None, None, f"{value!r} is not a valid {tag.rsplit(':', 1)[-1]} ({exc})", event.start_mark
        ) from None


class _LazyMap(Mapping):
    """A mapping over ``_raw`` records whose values are built on first access (``__getitem__``)."""

    __slots__ = ()
    _raw: dict

    def __contains__(self, path: object) -> bool:
        return path in self._raw

    def get(self, path: object, default: Any = None) -> Any:  # (Mapping's goes through try/except and a call more)
        return self[path] if path in self._raw else default

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


class _Positions(_LazyMap):
    """Key path → ``Position``, built on first access from ``(line, column)`` pairs.

    Most documents never report a position, so the parser records plain tuples and only the
    positions a rule asks for become ``Position`` objects.  Pickles (to worker processes, the build
    cache) as a plain dict.
    """

    __slots__ = ("_built", "_raw")

    def __init__(self, raw: dict[tuple, tuple[int, int]]) -> None:
        self._raw = raw
        self._built: dict[tuple, Position] = {}

    def __getitem__(self, path: tuple) -> Position:
        p = self._built.get(path)
        if p is None:
            p = self._built[path] = Position(*self._raw[path])
        return p

    def __reduce__(self) -> tuple:
        return (_Positions, (self._raw,))  # plain tuples: cheap to pickle, still lazy on the other side


class _Scalars(_LazyMap):
    """Path → ``Scalar``, built on first access (see ``_Positions``).

    Each raw entry is either the parser's ``(resolved tag, ScalarEvent)`` or, after pickling, a
    record ``(tag suffix, text, style, line, column, end line, end column)``.
    """

    __slots__ = ("_built", "_line_base", "_raw")

    def __init__(self, raw: dict[tuple, tuple], line_base: int) -> None:
        self._raw = raw
        self._built: dict[tuple, Scalar] = {}
        self._line_base = line_base  # added to libyaml's 0-based line numbers (events only)

    def _record(self, raw: tuple) -> tuple:
        if len(raw) != 2:
            return raw
        tag, event = raw
        start, end, base = event.start_mark, event.end_mark, self._line_base
        # libyaml reports plain scalars' style as '', the Python parser as None
        return (tag.rsplit(":", 1)[-1], event.value, event.style or None,
                start.line + base, start.column + 1, end.line + base, end.column + 1)

    def __getitem__(self, path: tuple) -> Scalar:
        s = self._built.get(path)
        if s is None:
            tag, text, style, line, column, end_line, end_column = self._record(self._raw[path])
            s = self._built[path] = Scalar(tag, text, style, Position(line, column), Position(end_line, end_column))
        return s

    def __reduce__(self) -> tuple:
        return (_Scalars, ({path: self._record(raw) for path, raw in self._raw.items()}, 0))


def positions_record(keys: Mapping[tuple, Position],
                     paths: Iterable[tuple] | None = None) -> dict[tuple, tuple[int, int]]:
    """Key positions (of ``paths`` only, when given) as a plain dict of ``(line, column)``: what
    crosses between processes (pickling the mapping objects runs Python code for each; a dict of
    tuples does not)."""
    if isinstance(keys, _Positions):
        raw = keys._raw
        return raw if paths is None else {p: raw[p] for p in paths if p in raw}
    return {path: (p.line, p.column) for path, p in keys.items() if paths is None or path in paths}


def scalars_record(scalars: Mapping[tuple, Scalar], paths: Iterable[tuple] | None = None) -> dict[tuple, tuple]:
    """Scalars (at ``paths`` only, when given) as a plain dict of ``(tag, text, style, line,
    column, end line, end column)``."""
    if isinstance(scalars, _Scalars):
        raw, record = scalars._raw, scalars._record
        return {p: record(raw[p]) for p in (raw if paths is None else paths) if p in raw}
    return {path: (s.tag, s.text, s.style, s.position.line, s.position.column, s.end.line, s.end.column)
            for path, s in scalars.items() if paths is None or path in paths}


def positions_from_record(raw: dict[tuple, tuple[int, int]]) -> Mapping[tuple, Position]:
    return _Positions(raw)


def scalars_from_record(raw: dict[tuple, tuple]) -> Mapping[tuple, Scalar]:
    return _Scalars(raw, 0)


def _resolve_tag(event: Any, implicit_resolvers: Mapping) -> str:
    """The tag a YAML 1.1 safe loader gives a scalar (``BaseResolver.resolve``, inlined)."""
    tag = event.tag
    if tag is not None and tag != "!":
        return tag
    if event.implicit[0]:  # a plain scalar: the implicit resolvers for its first character
        value = event.value
        for tag, regexp in implicit_resolvers.get(value[0] if value else "", ()):
            if regexp.match(value):
                return tag
        for tag, regexp in implicit_resolvers.get(None, ()):
            if regexp.match(value):
                return tag
    return _STR_TAG


# libyaml's refusal of a tab that is text (see load_yaml)
_LIBYAML_BLOCK_TAB = "found a tab character where an indentation space is expected"


def load_yaml(text: str, line_offset: int = 0) -> tuple[Any, Mapping, Mapping, list[tuple[str, Position]]]:
    """Parse one YAML document safely.

    Returns ``(data, key_positions, scalars, duplicate_keys)``.  Positions are 1-based and shifted by
    ``line_offset`` lines.  Raises ``yaml.YAMLError`` or ``YamlLimitError``.
    """
    simple = _simple_yaml(text, line_offset)
    if simple is not None:
        return simple
    try:
        return _load_events(_EventParser(text).get_event, text, line_offset)
    except yaml.scanner.ScannerError as exc:
        # libyaml refuses a block scalar whose first line starts with a tab after its indentation
        # (`description: |` then `  <tab>code`), which YAML, PyYAML's Python scanner and skills-ref
        # read as text: such a (rare) document is read again with the Python parser.
        if exc.problem != _LIBYAML_BLOCK_TAB or exc.context != "while scanning a block scalar" \
                or _EventParser is yaml.SafeLoader:
            raise
    return _load_events(yaml.SafeLoader(text).get_event, text, line_offset)


@dataclass(slots=True)
class _Tree:
    """What ``_load_events`` builds: the positions of keys and list items and the scalars' records
    (tag, event), by path; the duplicate keys; the anchored nodes (value, node count); and the
    document's value once complete (``root``)."""

    base: int  # the first line's number
    keys: dict[tuple, tuple[int, int]] = field(default_factory=dict)
    scalars: dict[tuple, tuple[str, Any]] = field(default_factory=dict)
    duplicates: list[tuple[str, Position]] = field(default_factory=list)
    anchors: dict[str, tuple[Any, int]] = field(default_factory=dict)
    root: list[Any] = field(default_factory=list)

    def attach(self, value: Any, event: Any, record: Any, frame: list[Any] | None,
               start: tuple[int, int] | None = None) -> None:
        """Put a finished node into its parent (``record``: the scalar's (tag, event), or None;
        ``start``: where a finished mapping or list began, its position as a list item)."""
        if frame is None:
            self.root.append(value)
            if record is not None:
                self.scalars[()] = record
            return
        container = frame[0]
        if frame[5]:  # mapping
            if frame[2] is None:
                # This value is a key.
                if record is None or not isinstance(value, str):
                    raise yaml.constructor.ConstructorError(
                        None, None, "only plain text keys are supported in frontmatter", event.start_mark
                    )
                mark = event.start_mark
                frame[2] = event.value
                frame[6] = (mark.line + self.base, mark.column + 1)
                return
            key, key_pos = frame[2], frame[6]
            frame[2] = None
            if key in container:
                self.duplicates.append((key, Position(*key_pos)))
                return  # the first occurrence wins; the duplicate is reported
            container[key] = value
            child = frame[1] + (key,)
        else:
            child = frame[1] + (len(container),)
            container.append(value)
            mark = event.start_mark
            key_pos = start or (mark.line + self.base, mark.column + 1)
        self.keys[child] = key_pos
        if record is not None:
            self.scalars[child] = record


def _scalar_value(event: Any, implicit_resolvers: Mapping, wildcard: Any) -> tuple[Any, str]:
    """A scalar's (value, tag), the tag resolved as BaseResolver.resolve does (inlined)."""
    value = event.value
    tag = event.tag
    if tag is None or tag == "!":
        tag = _STR_TAG
        if event.implicit[0]:  # plain: the implicit resolvers for its first character
            for candidate, regexp in implicit_resolvers.get(value[0] if value else "", ()):
                if regexp.match(value):
                    tag = candidate
                    break
            else:
                if wildcard:
                    tag = _resolve_tag(event, implicit_resolvers)
    if tag != _STR_TAG:
        value = _typed_scalar(tag, value, event)
    return value, tag


def _open_frame(event: Any, frame: list[Any] | None, depth: int, node_count: int, base: int) -> list[Any]:
    """The stack frame of a mapping or list starting at ``event`` (``frame``: its parent's; ``depth``:
    the stack's size; ``node_count``: the nodes so far, this one included)."""
    if depth >= MAX_YAML_DEPTH:
        raise YamlLimitError(f"YAML nesting deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
    if event.tag not in (None, "!", _TAG_PREFIX + "map", _TAG_PREFIX + "seq"):
        raise yaml.constructor.ConstructorError(
            None, None, f"unsupported YAML tag {event.tag!r}", event.start_mark
        )
    is_map = type(event) is _MappingStartEvent
    if frame is not None:
        if frame[5] and frame[2] is None:
            raise yaml.constructor.ConstructorError(
                None, None, "only plain text keys are supported in frontmatter", event.start_mark
            )
        path = frame[1] + ((frame[2],) if frame[5] else (len(frame[0]),))
    else:
        path = ()
    mark = event.start_mark
    return [{} if is_map else [], path, None, event.anchor, node_count, is_map, None,
            (mark.line + base, mark.column + 1)]


def _alias_value(event: Any, anchors: Mapping[str, tuple[Any, int]], node_count: int) -> tuple[Any, int]:
    """An alias's value, and the node count with the aliased node counted again."""
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
    return value, node_count


def _load_events(get_event: Any, text: str, line_offset: int) -> tuple[Any, Mapping, Mapping, list[tuple[str, Position]]]:
    """``load_yaml`` over one parser's events."""
    implicit_resolvers = YAML_LOADER.yaml_implicit_resolvers
    wildcard = implicit_resolvers.get(None)
    tree = _Tree(line_offset + 1)
    base, attach, anchors = tree.base, tree.attach, tree.anchors
    key_map, scalar_map, duplicates = tree.keys, tree.scalars, tree.duplicates  # local names for the hot path
    node_count = 0
    # Stack frames: [container, path, pending_key (for mappings), anchor, start_count, is_mapping, key_pos,
    # start position]
    stack: list[list[Any]] = []
    frame: list[Any] | None = None  # stack[-1]
    while True:
        event = get_event()
        if event is None:
            break
        etype = type(event)
        if etype is _ScalarEvent:
            node_count += 1
            if frame is not None and frame[5] and frame[2] is None:
                # A mapping key, the most common event: only its text and position are kept (keys
                # are never typed).
                if event.tag is None and not event.anchor:
                    mark = event.start_mark
                    frame[2] = event.value
                    frame[6] = (mark.line + base, mark.column + 1)
                    continue
                value = event.value
                record = (_resolve_tag(event, implicit_resolvers), event)
            else:
                value, tag = _scalar_value(event, implicit_resolvers, wildcard)
                record = (tag, event)
                if frame is not None and not event.anchor:
                    # A value in a mapping or an item of a list: attach it here (the common case).
                    container = frame[0]
                    if frame[5]:
                        key = frame[2]
                        frame[2] = None
                        if key in container:
                            duplicates.append((key, Position(*frame[6])))
                        else:
                            container[key] = value
                            child = frame[1] + (key,)
                            key_map[child] = frame[6]
                            scalar_map[child] = record
                    else:
                        child = frame[1] + (len(container),)
                        container.append(value)
                        mark = event.start_mark
                        key_map[child] = (mark.line + base, mark.column + 1)
                        scalar_map[child] = record
                    if node_count > MAX_YAML_NODES:
                        raise YamlLimitError(f"YAML has more than {MAX_YAML_NODES} nodes", event.start_mark)
                    continue
            if event.anchor:
                anchors[event.anchor] = (value, 1)
            attach(value, event, record, frame)
        elif etype is _MappingStartEvent or etype is _SequenceStartEvent:
            node_count += 1
            frame = _open_frame(event, frame, len(stack), node_count, base)
            stack.append(frame)
        elif etype is _MappingEndEvent or etype is _SequenceEndEvent:
            done = stack.pop()
            frame = stack[-1] if stack else None
            if done[3]:
                anchors[done[3]] = (done[0], node_count - done[4] + 1)
            attach(done[0], event, None, frame, done[7])
        elif etype is _AliasEvent:
            value, node_count = _alias_value(event, anchors, node_count)
            attach(value, event, None, frame)
        elif etype is _DocumentStartEvent and tree.root:
            raise yaml.composer.ComposerError(
                None, None, "expected a single document in the frontmatter", event.start_mark
            )
        if node_count > MAX_YAML_NODES:
            raise YamlLimitError(f"YAML has more than {MAX_YAML_NODES} nodes", event.start_mark)
    root = tree.root
    if not text.isascii() and _YAML_ONLY_BREAK.search(text):  # (isascii: a flag, no scan)
        return (root[0] if root else None), *_relined(text, base, key_map, scalar_map, duplicates)
    return (root[0] if root else None), _Positions(key_map), _Scalars(scalar_map, base), duplicates


# --- the common frontmatter without libyaml -------------------------------------------------------
#
# Most frontmatter is a few `key: value` lines, a `description: |` block and a `metadata:` map of
# plain values.  libyaml's events for it cost ~25 us a file (a Python object for every event and
# mark), the largest single item of a 10,000-skill lint.  ``_simple_yaml`` reads that shape
# directly and gives exactly what ``_load_events`` gives (values, key positions, scalar records with
# libyaml's marks); anything else (comments, tabs, flow collections, anchors, escapes, multi-line
# plain or quoted scalars, lists, typed values such as `true` or `1.0`, deeper nesting, unprintable
# characters) returns None, and libyaml reads the document.  ``test_simple_yaml`` compares both
# readings on every frontmatter of the shared corpora.

_SIMPLE_LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?\Z")
_PLAIN_FIRST_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")  # (indicators: a plain scalar cannot start with them)


def _simple_scalar(raw: str, line: int, column: int) -> tuple[str, tuple] | None:
    """A one-line value (``raw``, starting at 0-based ``line``/``column``): its text and scalar
    record, or None when it is not plain, single- or double-quoted text on its own line."""
    first = raw[:1]
    if not first or first == " " or raw[-1] == " " or not raw.isprintable():
        return None
    if first == '"':
        if len(raw) < 2 or raw[-1] != '"' or '"' in raw[1:-1] or "\\" in raw:
            return None
        value, style = raw[1:-1], '"'
    elif first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != "'" or "'" in inner.replace("''", ""):
            return None
        value, style = inner.replace("''", "'"), "'"
    else:
        # (a one-character `in` is a memchr, a two-character one compares at each character)
        if first in _PLAIN_FIRST_BAD or raw[-1] == ":" or ":" in raw and ": " in raw or "#" in raw and " #" in raw:
            return None
        for _tag, regexp in YAML_LOADER.yaml_implicit_resolvers.get(first, ()):
            if regexp.match(raw):
                return None  # (a bool, number, null, date...: libyaml's reading types it)
        value, style = raw, None
    return value, ("str", value, style, line, column + 1, line, column + 1 + len(raw))


def _simple_block(lines: list[str], start: int, base: int, column: int) -> tuple[str, tuple, int] | None:
    """A `|` block scalar whose indicator ends ``lines[start - 1]`` at ``column`` (0-based): its
    text, scalar record and the index of the line after it; None for any block but a plain literal
    one (an indentation or chomping indicator, a leading blank line, a line of spaces only, or
    less-indented text)."""
    first = lines[start] if start < len(lines) else ""
    indent = len(first) - len(first.lstrip(" "))
    if indent == 0 or not first.strip():
        return None
    prefix = " " * indent
    end = start
    while end < len(lines):
        text = lines[end]
        if text == "":
            end += 1
        elif text[0] != " ":
            break
        elif not text.startswith(prefix) or not text.strip():
            return None  # (less indented than the block, or spaces only)
        else:
            end += 1
    last = end
    while last > start and lines[last - 1] == "":
        last -= 1
    body = [text[indent:] for text in lines[start:last]]
    value = "\n".join(body) + "\n"
    if not all(map(str.isprintable, body)):
        return None
    return value, ("str", value, "|", start - 1 + base, column + 1, end + base, 1), end


def _simple_yaml(text: str, line_offset: int) -> tuple[Any, Mapping, Mapping, list[tuple[str, Position]]] | None:
    """``load_yaml(text, line_offset)`` for the common frontmatter shape, without libyaml; None
    for anything else."""
    if not text.endswith("\n") or "\t" in text or "#" in text and ("\n#" in text or text[0] == "#"):
        return None
    lines = text.split("\n")
    lines.pop()  # (the empty string after the last line break)
    if len(lines) > MAX_YAML_NODES // 4:
        return None  # (libyaml counts the nodes and stops at the limit)
    base = line_offset + 1
    data: dict[str, Any] = {}
    keys: dict[tuple, tuple[int, int]] = {}
    scalars: dict[tuple, tuple] = {}
    at, count = 0, len(lines)
    while at < count:
        line = lines[at]
        if line == "":
            at += 1
            continue
        m = _SIMPLE_LINE.match(line)
        if m is None:
            return None
        indent, key, raw = m.groups()
        if indent:
            return None
        if raw is None:
            found = _simple_map(lines, at + 1, base)
        elif raw == "|":
            found = _simple_block(lines, at + 1, base, len(key) + 2)
        else:
            one = _simple_scalar(raw, at + base, len(key) + 2)
            found = None if one is None else (*one, at + 1)
        if found is None:
            return None
        value, record, after = found
        if key in data:
            return None  # (libyaml reads it and reports the duplicate)
        data[key] = value
        keys[(key,)] = (at + base, 1)
        if isinstance(record, tuple):
            scalars[(key,)] = record
        else:  # (a map: its keys' positions and scalars, below this key's path)
            for path, position, scalar in record:
                path = (key, *path)
                keys[path], scalars[path] = position, scalar
        at = after
    return data, _Positions(keys), _Scalars(scalars, base), []


def _simple_map(lines: list[str], start: int, base: int) -> tuple[dict, list, int] | None:
    """A map of one-line values indented below its key, from ``lines[start]``: its values, a list of
    ``(path, key position, scalar record)`` and the index of the line after it; None otherwise."""
    values: dict[str, str] = {}
    rows: list[tuple[tuple, tuple[int, int], tuple]] = []
    indent = 0
    at = start
    while at < len(lines) and lines[at][:1] == " ":
        m = _SIMPLE_LINE.match(lines[at])
        if m is None:
            return None
        spaces, key, raw = m.groups()
        if raw is None or indent and len(spaces) != indent:
            return None
        indent = len(spaces)
        one = _simple_scalar(raw, at + base, indent + len(key) + 2)
        if one is None or key in values:
            return None  # (a duplicate below a key: libyaml reads it and reports it)
        values[key] = one[0]
        rows.append(((key,), (at + base, indent + 1), one[1]))
        at += 1
    if not values:
        return None  # (an empty value, or a list: libyaml reads it)
    return values, rows, at


# YAML 1.1 ends a line at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR too (libyaml and PyYAML count
# them in their marks); in the file they are text on a line, and lines end at LF only.
_YAML_ONLY_BREAK = re.compile("[\x85\u2028\u2029]")


def _yaml_position(text: str) -> Any:
    """A function taking a YAML mark's (0-based line, 0-based column) in ``text`` to the 0-based line
    and column of that character in ``text``'s lines (LF only), for a text with YAML-only breaks."""
    starts = [0] + [m.end() for m in re.finditer("[\n\x85\u2028\u2029]", text)]

    def at(line: int, column: int) -> tuple[int, int]:
        offset = min(starts[min(line, len(starts) - 1)] + column, len(text))
        real_line, real_column = line_col(text, offset)
        return real_line - 1, real_column - 1

    return at


def _relined(text: str, base: int, keys: dict, scalars: dict, duplicates: list) -> tuple:
    """``load_yaml``'s positions with YAML's lines turned into the file's (see ``_YAML_ONLY_BREAK``):
    a position on a wrong line misplaces a diagnostic and, worse, a quoting fix would edit the line
    below (``user-invocable: true`` became ``'true'``)."""
    at = _yaml_position(text)

    def moved(line: int, column: int) -> tuple[int, int]:  # (1-based column, line shifted by base)
        real_line, real_column = at(line - base, column - 1)
        return real_line + base, real_column + 1

    records = _Scalars(scalars, base)
    relined = {}
    for path in scalars:
        tag, value, style, line, column, end_line, end_column = records._record(scalars[path])
        relined[path] = (tag, value, style, *moved(line, column), *moved(end_line, end_column))
    return (_Positions({path: moved(*pos) for path, pos in keys.items()}), _Scalars(relined, 0),
            [(key, Position(*moved(pos.line, pos.column))) for key, pos in duplicates])


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
    if re.search(r"[ \t]#", value):  # (`Use when: x # note` or `Fix: see issue #12`? not a safe guess)
        return None
    if _YAML_ONLY_BREAK.search(value):  # (several lines to YAML: quoting would change the text)
        return None
    # The value must not continue on a later line (a multi-line plain scalar, blank lines included).
    after = next((line for line in lines[line_index + 1:] if line.strip()), "")
    if after.startswith(m.group("indent") + " "):
        return None
    at = sum(len(x) + 1 for x in lines[:line_index]) + m.start("value")
    quoted = "'" + value.replace("'", "''") + "'"
    # The line may itself continue a plain scalar begun above (`description: Does it.` then
    # `  Note: read this`): there quoting mends nothing and puts quotes into the text. The quoted
    # frontmatter must parse, or fail only further down (another line to fix).
    try:
        load_yaml(fm_text[:at] + quoted + fm_text[at + len(value):])
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if mark is None or _mark_position(fm_text, mark)[0] <= line_index:
            return None
    except (yaml.YAMLError, YamlLimitError, ValueError, OverflowError):
        return None
    return Fix(f"quote the value of {m.group('key')!r}", (TextEdit(fm_offset + at, fm_offset + at + len(value), quoted),))


def _error_position(fm_text: str, exc: yaml.MarkedYAMLError) -> tuple[int, int]:
    """The 0-based line and column in ``fm_text`` to report a YAML error at.

    Where the parser noticed the problem, unless that is not where the author must look: a key
    with no ``:`` is noticed on the next line (a valid ``license: MIT``, or the closing fence), and
    a quote or bracket left open only at the end of the frontmatter. There the construct's start
    (``while scanning a simple key``, ``… a quoted scalar`` at its opening quote) is the place.
    """
    problem, context = exc.problem_mark, exc.context_mark
    if problem is None or context is None:
        mark = problem or context
        return _mark_position(fm_text, mark) if mark else (-1, 0)
    at = _mark_position(fm_text, problem)
    if exc.context == "while scanning a simple key" or at[0] >= fm_text.count("\n"):
        return _mark_position(fm_text, context)
    return at


def _mark_position(fm_text: str, mark: Any) -> tuple[int, int]:
    """The 0-based line and column in ``fm_text`` of a YAML error's mark."""
    if _YAML_ONLY_BREAK.search(fm_text):
        return _yaml_position(fm_text)(mark.line, mark.column)
    return mark.line, mark.column


def _decode(raw: bytes, ctx: _Ctx) -> tuple[str | None, list[Diagnostic]]:
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None, [_diag(ctx, rules.NOT_UTF8_TEXT, 1, 1, "file is UTF-16; save it as UTF-8")]
    if raw.find(b"\x00", 0, 8192) >= 0:  # (no copy of the first 8 KB)
        return None, [_diag(ctx, rules.NOT_UTF8_TEXT, 0, 0, "binary file (contains NUL bytes), not UTF-8 text")]
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, [
            _diag(ctx, rules.NOT_UTF8_TEXT, line, col, f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}")
        ]


def parse_document(raw: bytes, path: str, kind: ItemKind = ItemKind.SKILL, skill: str | None = None) -> Document:
    """Parse one file's bytes.  Never raises: every problem becomes a diagnostic."""
    ctx = _Ctx(path, skill)
    digest = hashlib.sha256(raw).hexdigest()
    if len(raw) > MAX_FILE_BYTES:
        d = _diag(ctx, rules.FILE_TOO_LARGE, 0, 0, f"file is {len(raw):,} bytes; files over {MAX_FILE_BYTES:,} bytes are not parsed")
        return Document(path, kind, digest, len(raw), "", None, "", 1, (d,))
    text, diags = _decode(raw, ctx)
    if text is None:
        return Document(path, kind, digest, len(raw), "", None, "", 1, tuple(diags))
    return _parse_text(text, digest, len(raw), ctx, kind)


def _closing_fence(text: str, newline: int) -> re.Match[str] | None:
    """``_FENCE_LINE.search(text, newline + 1)``: the first ``---`` line after the one ending at
    ``newline``, tried only where a line starts with ``---`` (a multi-line ``^`` pattern is tried at
    every character of the frontmatter)."""
    pos = text.find("\n---", newline)
    while pos >= 0:
        m = _FENCE_LINE.match(text, pos + 1)
        if m:
            return m
        pos = text.find("\n---", pos + 1)
    return None


def _parse_text(original: str, digest: str, size: int, ctx: _Ctx, kind: ItemKind) -> Document:
    diags: list[Diagnostic] = []
    text = original
    offset = 0  # characters of `original` before `text` (the BOM)
    if text.startswith("\ufeff"):
        diags.append(
            _diag(ctx, rules.BYTE_ORDER_MARK, 1, 1, "file starts with a UTF-8 byte-order mark",
                  Fix("remove the byte-order mark", (TextEdit(0, 1, ""),)))
        )
        text, offset = text[1:], 1
    if "\r" in text:
        text = _lf_text(text, original, offset, ctx, diags)
    # Exact offsets for quoting fixes only hold when nothing was normalised; --fix loops until stable.
    exact = offset == 0 and len(text) == len(original)
    if contains(text, "<<<<<<<") or contains(text, ">>>>>>>"):
        for m in _CONFLICT.finditer(text):
            line, _ = line_col(text, m.start())
            diags.append(_diag(ctx, rules.MERGE_CONFLICT_MARKER, line, 1, "git merge-conflict marker; resolve the conflict"))

    # The frontmatter is found without splitting the whole file into lines: the body is most of it.
    first_end = text.find("\n")
    frontmatter: Frontmatter | None = None
    body_line = 1
    if not _FENCE.match(text if first_end < 0 else text[:first_end]):
        _missing_frontmatter(text, kind, ctx, diags)
        body = original[offset:]
        return Document(ctx.path, kind, digest, size, original, None, body, body_line, tuple(diags))

    fm_offset = first_end + 1  # offset of the frontmatter text inside `text`
    closing = _closing_fence(text, first_end) if first_end >= 0 else None
    if closing is None:
        diags.append(_diag(ctx, rules.UNCLOSED_FRONTMATTER, 1, 1, "frontmatter opened on line 1 is never closed with '---'"))
        return Document(ctx.path, kind, digest, size, original, None, "", 1, tuple(diags))
    close = text.count("\n", 0, closing.start())  # 0-based line index of the closing fence
    # (with its last line break: a block scalar written last keeps its final newline, as in any YAML
    # reader and skills-ref, so its length does not depend on the key order)
    fm_text = text[fm_offset : closing.start()] if closing.start() > fm_offset else ""
    # Body: everything after the closing fence line, byte-exact from the original text.
    if closing.end() >= len(text):
        body = ""
    elif len(text) == len(original) - offset:  # nothing normalised: offsets in `text` hold in `original`
        body = original[offset + closing.end() + 1 :]
    else:
        body = "\n".join(original[offset:].split("\n")[close + 1 :])
    body_line = close + 2

    def finish() -> Document:
        return Document(ctx.path, kind, digest, size, original, frontmatter, body, body_line, tuple(diags))

    if any(d.code == rules.MERGE_CONFLICT_MARKER.code and d.line <= close for d in diags):
        return finish()
    loaded = _loaded_frontmatter(fm_text, fm_offset, exact, ctx, diags)
    if loaded is None:
        return finish()
    data, keys, scalars, dups = loaded
    for key, kpos in dups:
        diags.append(_diag(ctx, rules.DUPLICATE_KEY, kpos.line, kpos.column,
                           f"duplicate key {key!r} (the first value is used)"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        diags.append(_diag(ctx, rules.FRONTMATTER_NOT_MAPPING, 2, 1,
                           f"frontmatter must be a YAML mapping of keys to values, found {a_type_name(data)}"))
        return finish()
    frontmatter = Frontmatter(data, keys, scalars, 1, close + 1)
    # A character the YAML reader refuses raw can only come from an escape (`\\x01`): without a
    # backslash in the text no value holds one, and the walk of every value is skipped.
    for path, char, in_key in _escaped_controls(data) if "\\" in fm_text else ():
        pos = frontmatter.value_position(*path) if path else Position(2, 1)
        where = ".".join(str(p) for p in path)
        where = (f"a key of {where}" if where else "a key") if in_key else where
        diags.append(_diag(ctx, rules.CONTROL_CHARACTER, pos.line, pos.column,
                           f"control character U+{ord(char):04X} written as an escape in {where} "
                           f"(not allowed in XML 1.0 and most readers)"))
    return finish()


def _lf_text(text: str, original: str, offset: int, ctx: _Ctx, diags: list[Diagnostic]) -> str:
    """``text`` with CRLF and lone CR line ends made LF, each kind reported once (with its fix, as
    offsets into ``original``, ``offset`` characters after its start)."""
    crlf = text.count("\r\n")
    if crlf:
        first = text.find("\r\n")
        line, col = line_col(text, first)
        diags.append(
            _diag(ctx, rules.CRLF_LINE_ENDINGS, line, col, f"file uses CRLF line endings ({plural(crlf, 'line')})",
                  Fix("convert line endings to LF", tuple(
                      TextEdit(m.start() + offset, m.start() + offset + 2, "\n")
                      for m in re.finditer("\r\n", text))))
        )
    text = text.replace("\r\n", "\n")
    if "\r" in text:  # a CR alone ends a line too (old Mac files), in YAML and in Markdown
        lone = text.count("\r")
        line, col = line_col(text, text.find("\r"))
        diags.append(
            _diag(ctx, rules.CRLF_LINE_ENDINGS, line, col, f"file uses CR (old Mac) line endings ({plural(lone, 'line')})",
                  Fix("convert line endings to LF", tuple(
                      TextEdit(m.start() + offset, m.start() + offset + 1, "\n")
                      for m in re.finditer("\r(?!\n)", original[offset:]))))
        )
        text = text.replace("\r", "\n")
    return text


def _missing_frontmatter(text: str, kind: ItemKind, ctx: _Ctx, diags: list[Diagnostic]) -> None:
    """Why a file whose first line is no ``---`` fence has no frontmatter: wrapped in a code fence,
    fences further down, or none at all (a convention file needs none)."""
    lines = text.split("\n")
    first_nonblank = next((i for i, line in enumerate(lines) if line.strip()), None)
    required = kind is not ItemKind.CONVENTION
    if first_nonblank is not None and _CODE_FENCE.match(lines[first_nonblank]) and first_nonblank + 1 < len(lines) and _FENCE.match(lines[first_nonblank + 1]):
        diags.append(_diag(ctx, rules.FENCED_FRONTMATTER, first_nonblank + 1, 1,
                           "the whole file is wrapped in a code fence; remove the ``` lines around the frontmatter"))
    elif (fence_at := next((i for i, line in enumerate(lines[:5]) if _FENCE.match(line)), None)) is not None \
            and any(_FENCE.match(line) for line in lines[fence_at + 1:fence_at + 200]):
        # (blank lines, a comment or a title above the frontmatter: clients read none of it)
        diags.append(_diag(ctx, rules.MISSING_FRONTMATTER, 1, 1,
                           f"frontmatter must start on line 1, found '---' on line {fence_at + 1}",
                           severity=None if required else Severity.WARNING))
    elif required:
        hint = ""
        if first_nonblank is not None and re.match(r"^[A-Za-z_-]+:\s", lines[first_nonblank]):
            hint = "; the file starts with YAML but has no '---' fences around it"
        diags.append(_diag(ctx, rules.MISSING_FRONTMATTER, 1, 1, "missing YAML frontmatter (a '---' line must open the file)" + hint))


def _loaded_frontmatter(fm_text: str, fm_offset: int, exact: bool, ctx: _Ctx,
                        diags: list[Diagnostic]) -> tuple[Any, Mapping, Mapping, list[tuple[str, Position]]] | None:
    """``load_yaml`` of the frontmatter, or None with the reason in ``diags`` (its limits, a control
    character, a tab in the indentation, invalid YAML with a quoting fix when ``exact``)."""
    if len(fm_text) > MAX_FRONTMATTER_BYTES // 4 and len(fm_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        diags.append(_diag(ctx, rules.YAML_LIMITS, 2, 1, f"frontmatter is over {MAX_FRONTMATTER_BYTES:,} bytes"))
        return None
    if _flow_depth_exceeds(fm_text, MAX_BRACKET_DEPTH):
        diags.append(_diag(ctx, rules.YAML_LIMITS, 2, 1, f"YAML nesting deeper than {MAX_YAML_DEPTH} levels"))
        return None
    try:
        return load_yaml(fm_text, line_offset=1)
    except YamlLimitError as exc:
        line, col = _mark_position(fm_text, exc.mark)
        diags.append(_diag(ctx, rules.YAML_LIMITS, line + 2, col + 1, str(exc)))
        return None
    except yaml.reader.ReaderError as exc:
        # (libyaml's position counts UTF-8 bytes, Python's reader characters; both stop at the first
        # character they refuse, which is therefore that character's first occurrence)
        at = fm_text.find(chr(exc.character)) if isinstance(exc.character, int) else -1
        line, col = line_col(fm_text, at if at >= 0 else min(exc.position, len(fm_text)))
        diags.append(_diag(ctx, rules.CONTROL_CHARACTER, line + 1, col,
                           f"control character U+{exc.character:04X} in frontmatter (mis-encoded text?)"))
        return None
    except yaml.MarkedYAMLError as exc:
        # A tab where indentation goes is the likely cause (a tab inside a block scalar or a quoted
        # value is text, and parses: it is never reported).
        fm_lines = fm_text.split("\n") if "\t" in fm_text else ()
        tab_lines = [i for i, line in enumerate(fm_lines, start=2)
                     if "\t" in line[: len(line) - len(line.lstrip(" \t"))]]
        if tab_lines:
            for ln in tab_lines[:5]:
                diags.append(_diag(ctx, rules.TAB_INDENTATION, ln, fm_lines[ln - 2].index("\t") + 1,
                                   "tab character in indentation; YAML allows only spaces"))
            return None
        mark_line, mark_col = _error_position(fm_text, exc)
        line, col = mark_line + 2 if mark_line >= 0 else 2, mark_col + 1
        problem = exc.problem or "invalid YAML"
        fix = None
        message = f"invalid YAML in frontmatter: {problem}"
        if exc.context:
            message += f" ({exc.context})"
        if "mapping values are not allowed" in problem:
            message = "invalid YAML in frontmatter: an unquoted ': ' inside a value; quote the value"
            if exact:
                fix = _quote_fix(fm_text, fm_offset, mark_line)
        diags.append(_diag(ctx, rules.INVALID_YAML, line, col, message, fix))
        return None
    except yaml.YAMLError as exc:  # pragma: no cover - every libyaml error is marked
        diags.append(_diag(ctx, rules.INVALID_YAML, 2, 1, f"invalid YAML in frontmatter: {exc}"))
        return None
    except (ValueError, OverflowError) as exc:  # bad timestamps, huge ints
        diags.append(_diag(ctx, rules.INVALID_YAML, 2, 1, f"invalid YAML value in frontmatter: {exc}"))
        return None


# What YAML does not accept written raw (its reader's NON_PRINTABLE: C0 but tab and line breaks,
# DEL, C1 but NEL, surrogates, U+FFFE/FFFF), it accepts as a double-quoted escape ("\x01"): decoded,
# such a character would reach every published format, where XML 1.0 cannot hold it at all.
_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE


def _escaped_controls(data: Any, path: tuple = ()) -> Iterator[tuple[tuple, str, bool]]:
    """(key path, character, in a key) for the first such character of each string, key or value, below ``data``."""
    stack = [(path, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            m = _NON_PRINTABLE.search(value)
            if m:
                yield where, m.group(), False
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and _NON_PRINTABLE.search(k):
                    yield where, _NON_PRINTABLE.search(k).group(), True
                stack.append(((*where, k), v))
        elif isinstance(value, list):
            stack.extend(((*where, i), v) for i, v in enumerate(value))


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
    if isinstance(value, bytes):  # `!!binary`: no text to show, and no text a client reads
        return "binary"
    return "text"


type_name = _type_name


def a_type_name(value: Any) -> str:
    """``type_name`` as a message says it: "an integer", "a list", "text", "nothing (null)"."""
    name = _type_name(value)
    if name in ("null", "text", "binary"):
        return {"null": "nothing (null)", "binary": "binary data"}.get(name, name)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"
