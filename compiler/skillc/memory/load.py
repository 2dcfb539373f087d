"""Read memory files: a repository's ``memory/`` folder or ``--memory PATH`` (files or folders).

* ``*.yaml`` / ``*.yml``: a list of entries (one per item), or one entry per YAML document
  (``---`` separated).  Aliases are refused (no alias bombs), and every problem names the line of the
  item, or of the offending key.
* ``*.jsonl``: one entry per line; blank lines and lines starting with ``//`` are skipped.

Every problem is collected (``LoadResult.problems``) rather than stopping at the first one.  With
``keep_going`` a malformed entry is skipped and a repairable one (a value over the size limits, control
characters) is repaired; each is still reported.  Folders are walked in byte order, symlinks are not
followed, hidden files and folders are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..discover.walk import path_key
from ..jsonio import load_json
from ..parse.document import YAML_LOADER
from ..secrets import redact as redact_text
from .model import EntryError, MemoryEntry, content_hash, derived_id, entry_from_dict

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_YAML_NODES = 5_000_000
SUFFIXES = (".yaml", ".yml", ".jsonl")


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int  # 1-based; 0 = the whole file
    message: str
    severity: str = "error"  # error | warning (skipped or repaired with --keep-going)

    def __post_init__(self) -> None:
        # A message quotes the value it refuses ("'category' must be one of …, not 'password=…'"):
        # problems are printed and kept in the snapshot, so a secret in them is redacted too.
        object.__setattr__(self, "message", redact_text(self.message)[0])
        # (a lone surrogate quoted from a JSON escape cannot be printed nor written to snapshot.json)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in self.message):
            object.__setattr__(self, "message", self.message.encode("utf-8", "backslashreplace").decode("utf-8"))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "severity": self.severity, "message": self.message}


@dataclass(frozen=True, slots=True)
class LoadResult:
    entries: tuple[MemoryEntry, ...]
    problems: tuple[Problem, ...]
    files: tuple[str, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


def memory_files(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """(file, display path) for every memory file under ``paths``, byte-ordered within a folder.

    A file reached twice (``memory memory``, or ``memory/a.yaml memory``) is read once, at its first
    mention, as lint reads a path given twice: its entries are not their own duplicates."""
    seen: set[str] = set()

    def first(p: Path) -> bool:
        key = os.path.realpath(p)
        if key in seen:
            return False
        seen.add(key)
        return True

    for root in paths:
        root = Path(root)
        if root.is_file():
            if first(root):
                yield root, root.name if root.is_absolute() else root.as_posix()
            continue
        if not root.is_dir():
            continue
        label = root.name or root.resolve().name
        found: list[tuple[bytes, Path, str]] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                p = Path(dirpath) / name
                if name.startswith(".") or not name.endswith(SUFFIXES) or p.is_symlink():
                    continue
                rel = p.relative_to(root).as_posix()
                found.append((path_key(rel), p, f"{label}/{rel}"))
        for _, p, shown in sorted(found, key=lambda t: t[0]):
            if first(p):
                yield p, shown


def load_paths(paths: Iterable[Path], *, default_time: str, keep_going: bool = False,
               source: str = "file") -> LoadResult:
    entries: list[MemoryEntry] = []
    problems: list[Problem] = []
    files: list[str] = []
    seen: dict[str, str] = {}
    first: dict[str, MemoryEntry] = {}
    for path in paths:
        p = Path(path)
        if not p.exists():
            problems.append(Problem(str(path), 0, "no such file or folder"))
    for file, shown in memory_files(paths):
        files.append(shown)
        for entry, line, problem in _load_file(file, shown, default_time, keep_going, source):
            if problem is not None:
                problems.append(problem)
            if entry is None:
                continue
            if entry.id in seen and _same_memory(first[entry.id], entry):
                entries.append(entry)  # (consolidation merges it as an exact duplicate)
                continue
            if entry.id in seen:
                problems.append(Problem(shown, line, f"duplicate id {entry.id!r} (first at {seen[entry.id]})"
                                        + ("; skipped" if keep_going else ""), "warning" if keep_going else "error"))
                continue
            seen[entry.id] = f"{shown}:{line}"
            first[entry.id] = entry
            entries.append(entry)
    return LoadResult(tuple(entries), tuple(problems), tuple(files))


def _same_memory(a: MemoryEntry, b: MemoryEntry) -> bool:
    """Two entries whose shared id is the one derived from their namespace and content (written
    without one, or by `memory extract`, which writes it): the same sentence said twice, say in two
    conversations.  They are one memory, which consolidation merges as an exact duplicate (same
    namespace, type and normalised text), not two memories that claim one id."""
    derived = derived_id(b.namespace, b.content)
    ids = (derived, "forget-" + derived[2:])  # (`memory extract` names a tombstone so)
    return (b.id in ids and derived_id(a.namespace, a.content) == derived and a.forget == b.forget
            and a.type == b.type and (a.note is None) == (b.note is None)
            # (still one text once redacted, which comes first: else both stay active under one id)
            and content_hash(redact_text(a.content)[0]) == content_hash(redact_text(b.content)[0]))


def _load_file(file: Path, shown: str, default_time: str, keep_going: bool,
               source: str) -> Iterator[tuple[MemoryEntry | None, int, Problem | None]]:
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            yield None, 0, Problem(shown, 0, f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            return
        raw = file.read_bytes()
    except OSError as exc:
        yield None, 0, Problem(shown, 0, f"cannot read: {exc.strerror or exc}")
        return
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        yield None, raw.count(b"\n", 0, exc.start) + 1, Problem(
            shown, raw.count(b"\n", 0, exc.start) + 1, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")
        return
    items = _jsonl_items(text, shown) if file.name.endswith(".jsonl") else _yaml_items(text, shown)
    for item in items:
        if isinstance(item, Problem):
            yield None, item.line, _soften(item, keep_going)
            continue
        data, line, field_line = item
        yield from _build(data, line, field_line, shown, default_time, keep_going, source)


def _soften(problem: Problem, keep_going: bool) -> Problem:
    if not keep_going:
        return problem
    return Problem(problem.path, problem.line, problem.message + "; skipped", "warning")


def _build(data: Any, line: int, field_line: Any, shown: str, default_time: str, keep_going: bool,
           source: str) -> Iterator[tuple[MemoryEntry | None, int, Problem | None]]:
    prov = {"file": shown, "line": line}
    try:
        entry, _ = entry_from_dict(data, default_time=default_time, source=source, provenance=prov)
        yield entry, line, None
        return
    except EntryError as exc:
        where = field_line(exc.field) if exc.field else line
        if not (keep_going and exc.repairable):
            yield None, line, _soften(Problem(shown, where, str(exc)), keep_going)
            return
    try:
        entry, repairs = entry_from_dict(data, default_time=default_time, source=source, repair=True, provenance=prov)
    except EntryError as exc:
        where = field_line(exc.field) if exc.field else line
        yield None, line, _soften(Problem(shown, where, str(exc)), True)
        return
    for fld, message in repairs.messages:
        yield None, line, Problem(shown, field_line(fld), f"entry {entry.id!r}: {message}", "warning")
    yield entry, line, None


def _jsonl_items(text: str, shown: str) -> Iterator[Any]:
    for number, raw_line in enumerate(text.split("\n"), 1):
        stripped = raw_line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            data = load_json(stripped)
        except json.JSONDecodeError as exc:
            yield Problem(shown, number, f"malformed JSON line: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:
            yield Problem(shown, number, "malformed JSON line: nested too deeply")
            continue
        yield data, number, (lambda _f, n=number: n)


def _key_line(node: yaml.Node, fld: str, default: int) -> int:
    """The line of ``fld`` (``a.b`` paths, ``a[2]`` items) inside a mapping node."""
    current = node
    line = default
    for part in fld.replace("]", "").replace("[", ".").split("."):
        if isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                if isinstance(k, yaml.ScalarNode) and k.value == part:
                    line, current = k.start_mark.line + 1, v
                    break
            else:
                return line
        elif isinstance(current, yaml.SequenceNode) and part.isdigit() and int(part) < len(current.value):
            current = current.value[int(part)]
            line = current.start_mark.line + 1
        else:
            return line
    return line


def _check_tree(node: yaml.Node) -> str | None:
    """Refuse aliases (a node reached twice) and absurdly large trees."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            return "YAML aliases are not allowed in memory files"
        seen.add(id(n))
        if len(seen) > MAX_YAML_NODES:
            return f"more than {MAX_YAML_NODES:,} YAML nodes"
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.append(k)
                stack.append(v)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
    return None


def _duplicate_key(node: yaml.Node) -> tuple[str, int] | None:
    """The first key that a mapping below ``node`` holds twice, with its line."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for k, v in n.value:
                if isinstance(k, yaml.ScalarNode):
                    if k.value in seen:
                        return k.value, k.start_mark.line + 1
                    seen.add(k.value)
                stack.append(v)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
    return None


def _yaml_items(text: str, shown: str) -> Iterator[Any]:
    loader = YAML_LOADER(text)
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                doc = loader.get_node()
            except yaml.MarkedYAMLError as exc:
                mark = exc.problem_mark or exc.context_mark
                line = mark.line + 1 if mark else 0
                yield Problem(shown, line, f"malformed YAML: {exc.problem or exc}")
                return
            except RecursionError:
                yield Problem(shown, 0, "malformed YAML: nested too deeply")
                return
            if doc is None:
                continue
            bad = _check_tree(doc)
            if bad:
                yield Problem(shown, doc.start_mark.line + 1, bad)
                return
            nodes = doc.value if isinstance(doc, yaml.SequenceNode) else [doc]
            for node in nodes:
                line = node.start_mark.line + 1
                duplicate = _duplicate_key(node)
                if duplicate is not None:  # (YAML keeps the last value: a reviewer reads the first)
                    yield Problem(shown, duplicate[1], f"duplicate key {duplicate[0]!r}")
                    continue
                try:
                    data = loader.construct_document(node)
                except yaml.YAMLError as exc:
                    mark = getattr(exc, "problem_mark", None)
                    yield Problem(shown, mark.line + 1 if mark else line, f"malformed YAML: {getattr(exc, 'problem', exc)}")
                    continue
                except (ValueError, TypeError, OverflowError) as exc:
                    yield Problem(shown, line, f"malformed YAML value: {exc}")
                    continue
                yield data, line, (lambda f, n=node, ln=line: _key_line(n, f, ln))
    finally:
        loader.dispose()


def dump_entries(entries: Iterable[MemoryEntry], name: str) -> str:
    """Entries as a memory file: JSONL for ``*.jsonl``, else a YAML list (one item per entry)."""
    items = [e.to_json() for e in entries]
    if name.endswith(".jsonl"):
        return "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in items)
    if not items:
        return "[]\n"
    return yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
