"""Importers: runtime memory stores → memory entries (``skillc memory import SOURCE --into FILE``).

Formats (``detect`` picks one from the file; ``--from`` forces it):

``plan-cascade``  SQLite with seed 000's ``project_memories`` (semantic, its category),
                  ``episodic_records`` (episodic: task → situation, approach → action, outcome summary →
                  reasoning; record_type success/failure → outcome, discovery → partial) and
                  ``skill_library`` (procedural: name, description, tags → triggers, body, numbered or
                  bulleted body lines → steps; usage_count → access count, success_rate → importance).
                  ``project_path`` becomes ``project/<path without leading />``.
``talkcody``      SQLite with seed 001's ``memories``: the JSON ``namespace`` array becomes
                  ``global`` / ``project/<id>`` / ``conversation/<id>`` / ``skill/<id>`` (``["user", …]``
                  counts as global); ``metadata`` gives category (when it is one of seed 000's),
                  tags, accessCount, lastAccessedAt and the structured parts.
``skill-memory``  SQLite with seed 003's ``skill_memory``: one per-skill note per row in
                  ``skill/<skill_id>``; kind gotcha/fix → semantic ``correction``, discovery → ``fact``,
                  workflow → procedural.
``letta``         A Letta agent file (``.af``, AgentFileSchema with ``agents`` and ``blocks``): one entry
                  per block (a bulleted block: one per bullet), category from the label (``LETTA_LABELS``).
``mem0``          Mem0 ``get_all`` JSON (``{"results": [...]}`` or a list): ``memory`` → content;
                  ``run_id`` → ``conversation/<run_id>``, else global; metadata.category when valid.

A SQLite file without the expected tables or columns is refused with the missing names.  Imported
text is redacted (``redact``) before it is written.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SkillcError
from ..jsonio import load_json
from ..secrets import redact as redact_text
from .model import CATEGORIES, EntryError, MemoryEntry, entry_from_dict

FORMATS = ("plan-cascade", "talkcody", "skill-memory", "letta", "mem0")

# Letta block label → (type, category, importance).  Unknown labels: semantic fact, 0.5.
LETTA_LABELS: dict[str, tuple[str, str | None, float]] = {
    "human": ("semantic", "fact", 0.7),
    "about_user": ("semantic", "fact", 0.7),
    "preferences": ("semantic", "preference", 0.9),
    "custom_instructions": ("semantic", "preference", 0.9),
    "learned_corrections": ("semantic", "correction", 0.9),
    "conversation_patterns": ("semantic", "pattern", 0.6),
    "project": ("semantic", "convention", 0.7),
    "conventions": ("semantic", "convention", 0.7),
    "persona": ("procedural", None, 0.6),
    "soul": ("procedural", None, 0.6),
    "active_hypotheses": ("semantic", "fact", 0.3),
    "scratchpad": ("semantic", "fact", 0.3),
}
NOTE_KIND_MAP = {"gotcha": ("semantic", "correction"), "fix": ("semantic", "correction"),
                 "discovery": ("semantic", "fact"), "workflow": ("procedural", None)}

_SQLITE_MAGIC = b"SQLite format 3\x00"
# the columns each importer reads (the rest of the seed's columns are optional)
REQUIRED = {
    "project_memories": ("id", "project_path", "category", "content", "keywords", "importance", "access_count",
                         "created_at", "updated_at", "last_accessed_at"),
    "episodic_records": ("id", "project_path", "session_id", "record_type", "task_summary", "approach_summary",
                         "outcome_summary", "created_at"),
    "skill_library": ("id", "project_path", "name", "description", "body", "created_at"),
    "memories": ("id", "type", "content", "importance", "namespace", "metadata", "created_at", "updated_at"),
    "skill_memory": ("id", "skill_id", "kind", "delta", "created_at"),
}
TABLES = {"plan-cascade": ("project_memories", "episodic_records", "skill_library"), "talkcody": ("memories",),
          "skill-memory": ("skill_memory",)}


@dataclass(frozen=True, slots=True)
class ImportResult:
    format: str
    entries: tuple[MemoryEntry, ...]
    skipped: tuple[str, ...]  # "table row id: reason" for rows that could not become entries
    repaired: tuple[str, ...] = ()  # "table row id: what was capped or stripped"


class ImportProblem(SkillcError):
    """The source is not what the importer expects (exit 1)."""

    exit_code = 1


def detect(path: Path) -> str:
    _regular(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise SkillcError(f"{path}: cannot read: {exc.strerror}") from None
    if head == _SQLITE_MAGIC:
        with _connect(path) as con:
            tables = _tables(con)
        for fmt, names in TABLES.items():
            if any(n in tables for n in names):
                return fmt
        raise ImportProblem(
            f"{path}: SQLite database without any memory table: missing project_memories/episodic_records/"
            f"skill_library (Plan Cascade), memories (TalkCody) or skill_memory (seed 003); "
            f"it has: {', '.join(sorted(tables)) or 'no tables'}")
    try:
        doc = _json(path)
    except ImportProblem as exc:  # neither SQLite nor JSON: say what is accepted, not only why JSON failed
        raise ImportProblem(f"{path}: not a recognised memory source ({exc}); skillc imports SQLite from Plan "
                            "Cascade, TalkCody or skill-memory, a Letta .af file, or Mem0 get_all JSON",
                            hint="memories written by hand go in a memory/ folder as YAML or JSONL "
                                 "(`skillc memory freeze` reads them)") from None
    if isinstance(doc, dict) and ("agents" in doc or "blocks" in doc or "core_memory" in doc or path.suffix == ".af"):
        return "letta"
    if path.suffix == ".af":
        return "letta"
    if (isinstance(doc, dict) and "results" in doc) or isinstance(doc, list):
        return "mem0"
    raise ImportProblem(f"{path}: not a recognised memory source (SQLite from Plan Cascade, TalkCody or "
                        "skill-memory; a Letta .af file; Mem0 get_all JSON)", hint="pass --from FORMAT")


_HOSTILE = (RecursionError, TypeError, ValueError, KeyError, AttributeError, OverflowError)


def _regular(path: Path) -> None:
    """A source must be a regular file: a FIFO or a device (/dev/zero) would never end."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ImportProblem(f"{path}: not a regular file")
    except OSError as exc:
        raise SkillcError(f"{path}: cannot read: {exc.strerror}") from None


def import_source(path: Path, fmt: str | None, *, default_time: str) -> ImportResult:
    _regular(path)
    fmt = fmt or detect(path)
    if fmt not in FORMATS:
        raise SkillcError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    reader: Callable[..., Iterator[tuple[str, Any]]] = {
        "plan-cascade": _plan_cascade, "talkcody": _talkcody, "skill-memory": _skill_memory,
        "letta": _letta, "mem0": _mem0}[fmt]
    entries: list[MemoryEntry] = []
    skipped: list[str] = []
    repaired: list[str] = []
    seen: set[str] = set()
    rows = reader(path)
    while True:
        try:
            where, raw = next(rows)
        except StopIteration:
            break
        except _HOSTILE as exc:  # a value the source's format does not allow (nested too deep, a number
            # with 5,000 digits, a list that is a number): the source is not what it claims to be
            raise ImportProblem(f"{path}: not a valid {fmt} source ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0][:200] if str(exc) else ''})") from None
        if isinstance(raw, dict) and "__error__" in raw:
            skipped.append(f"{where}: {raw['__error__']}")
            continue
        try:
            entry, repairs = entry_from_dict(raw, default_time=default_time, source=fmt, repair=True)
        except EntryError as exc:
            skipped.append(f"{where}: {exc}")
            continue
        except _HOSTILE as exc:
            skipped.append(f"{where}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        repaired.extend(f"{where}: {message}" for _, message in repairs.messages)
        if entry.id in seen:
            skipped.append(f"{where}: duplicate id {entry.id!r}")
            continue
        seen.add(entry.id)
        entries.append(entry)
    # (the reasons quote row ids and values: printed and returned, so never with a secret in them)
    return ImportResult(fmt, tuple(entries), tuple(redact_text(m)[0] for m in skipped),
                        tuple(redact_text(m)[0] for m in repaired))


# ---------------------------------------------------------------- SQLite helpers

SQLITE_SECONDS = 120  # the longest an import may query a database

@contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    """The database at ``path``, open for reading for the ``with`` block; closed, and any copy of it
    removed, when the block ends (the command leaves with ``os._exit``: no ``atexit`` runs)."""
    with ExitStack() as stack:
        try:
            con = _open(path, stack)
            stack.callback(con.close)
            deadline = time.monotonic() + SQLITE_SECONDS
            con.set_progress_handler(lambda: int(time.monotonic() > deadline), 100_000)
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except (sqlite3.Error, OSError) as exc:
            raise ImportProblem(f"{path}: cannot open as SQLite: {exc}") from None
        yield con


def _open(path: Path, stack: ExitStack) -> sqlite3.Connection:
    # Nothing is written beside the source (a read-only open of a WAL database still creates its
    # -shm file): without a write-ahead log it is opened immutable; with one (rows an app has not
    # checkpointed yet live there) a copy of both is read, in a temporary folder the stack removes.
    # A query that runs away (a recursive view) is stopped after SQLITE_SECONDS (``_connect``).
    if not path.with_name(path.name + "-wal").exists():
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skillc-import-")))
    shutil.copyfile(path, copy / "db")
    shutil.copyfile(path.with_name(path.name + "-wal"), copy / "db-wal")
    return sqlite3.connect(copy / "db")


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}  # (views run code)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}


def _check(con: sqlite3.Connection, path: Path, fmt: str, need_all: bool = False) -> list[str]:
    """The tables of ``fmt`` present; raises naming the missing tables or columns."""
    tables = _tables(con)
    present = [t for t in TABLES[fmt] if t in tables]
    missing_tables = [t for t in TABLES[fmt] if t not in tables]
    if not present or (need_all and missing_tables):
        raise ImportProblem(f"{path}: not a {fmt} database: missing table(s) {', '.join(missing_tables)}")
    problems = []
    for t in present:
        missing = [c for c in REQUIRED[t] if c not in _columns(con, t)]
        if missing:
            problems.append(f"table {t} lacks column(s) {', '.join(missing)}")
    if problems:
        raise ImportProblem(f"{path}: {'; '.join(problems)}")
    return present


class _Unreadable:
    """A row with a text cell that is not UTF-8: skipped (named by its place, never quoted), the
    others imported (one such cell stopped the whole import, --keep-going or not)."""

    def __init__(self, table: str, number: int, column: str) -> None:
        self.where = f"{table} row {number}"
        self.error = {"__error__": f"a value of column {column!r} is not UTF-8 text"}


_SURROGATE = re.compile("[\udc80-\udcff]")


def _rows(con: sqlite3.Connection, table: str) -> Iterator[sqlite3.Row | _Unreadable]:
    con.row_factory = sqlite3.Row
    con.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")  # (checked per row below)
    cols = _columns(con, table)
    order = "rowid" if table != "skill_memory" else "id"
    try:
        for number, row in enumerate(con.execute(f'SELECT * FROM "{table}" ORDER BY {order}'), start=1):
            bad = next((k for k in row.keys() if isinstance(row[k], str) and _SURROGATE.search(row[k])), None)
            yield row if bad is None else _Unreadable(table, number, bad)
    except sqlite3.Error as exc:
        detail = str(exc)
        bad_text = re.match(r"Could not decode to UTF-8 column '([^']*)'", detail)
        if bad_text:  # (its message quotes the whole cell: never printed)
            detail = f"a value of column {bad_text.group(1)!r} is not UTF-8 text"
        elif "interrupted" in detail:
            detail = f"reading took more than {SQLITE_SECONDS} s (stopped)"
        raise ImportProblem(f"table {table}: cannot read: {detail[:300]}") from None
    _ = cols


def _number(value: Any, default: float) -> Any:
    """A number as given (the entry check refuses one out of range, by name), ``default`` for no
    number; an integer too large for a float stays one that is out of range (not an OverflowError)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return default
    try:
        float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")
    return value


def _json_list(value: Any) -> list[Any]:
    if value in (None, ""):
        return []
    try:
        data = load_json(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return [value] if isinstance(value, str) else []
    return data if isinstance(data, list) else []


def _get(row: sqlite3.Row, key: str, default: Any = None) -> Any:
    return row[key] if key in row.keys() else default  # noqa: SIM118 (sqlite3.Row has no __contains__)


def _project(path_value: Any) -> str:
    text = str(path_value or "").strip().strip("/")
    return f"project/{text}" if text and text != "*" else "global"


_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(.+?)\s*$")


def _plan_cascade(path: Path) -> Iterator[tuple[str, Any]]:
    with _connect(path) as con:
        present = _check(con, path, "plan-cascade")
        if "project_memories" in present:
            for r in _rows(con, "project_memories"):
                if isinstance(r, _Unreadable):
                    yield r.where, r.error
                    continue
                yield f"project_memories {r['id']}", {
                    "id": r["id"], "type": "semantic",
                    "category": r["category"] if r["category"] in CATEGORIES else None,
                    "content": r["content"], "namespace": _project(r["project_path"]),
                    "keywords": [str(k) for k in _json_list(r["keywords"])], "importance": r["importance"],
                    "access_count": r["access_count"], "created_at": r["created_at"], "updated_at": r["updated_at"],
                    "last_accessed_at": r["last_accessed_at"],
                    "provenance": {"table": "project_memories", "project_path": r["project_path"],
                                   "session_id": _get(r, "source_session_id"),
                                   "source_context": _get(r, "source_context")},
                }
        if "episodic_records" in present:
            for r in _rows(con, "episodic_records"):
                if isinstance(r, _Unreadable):
                    yield r.where, r.error
                    continue
                rt = r["record_type"]
                outcome = {"success": "success", "failure": "failure"}.get(rt, "partial")
                yield f"episodic_records {r['id']}", {
                    "id": r["id"], "type": "episodic",
                    "content": f"{r['task_summary']} — {r['approach_summary']} → {r['outcome_summary']}",
                    "namespace": _project(r["project_path"]),
                    "episode": {"situation": r["task_summary"], "action": r["approach_summary"], "outcome": outcome,
                                "reasoning": r["outcome_summary"]},
                    "keywords": [str(k) for k in _json_list(_get(r, "keywords"))],
                    "importance": 0.7 if rt == "failure" else 0.5,
                    "created_at": r["created_at"],
                    "provenance": {"table": "episodic_records", "project_path": r["project_path"],
                                   "session_id": r["session_id"], "record_type": rt,
                                   "tools_used": [str(t) for t in _json_list(_get(r, "tools_used"))]},
                }
        if "skill_library" in present:
            for r in _rows(con, "skill_library"):
                if isinstance(r, _Unreadable):
                    yield r.where, r.error
                    continue
                body = r["body"] or ""
                steps = [m.group(1) for line in body.splitlines() if (m := _STEP.match(line))]
                rate = _get(r, "success_rate", 1.0)
                yield f"skill_library {r['id']}", {
                    "id": r["id"], "type": "procedural", "content": f"{r['name']}: {r['description']}",
                    "namespace": _project(r["project_path"]),
                    "procedure": {"name": r["name"], "description": r["description"], "steps": steps[:100],
                                  "triggers": [str(t) for t in _json_list(_get(r, "tags"))], "body": body or None},
                    "tags": [str(t) for t in _json_list(_get(r, "tags"))],
                    "keywords": [str(k) for k in _json_list(_get(r, "keywords"))],
                    # (out of [0, 1] it is refused, as project_memories' importance is: never a silent 0.5)
                    "importance": _number(rate, 0.5),
                    "access_count": _get(r, "usage_count", 0) or 0,
                    "created_at": r["created_at"], "updated_at": _get(r, "updated_at"),
                    "provenance": {"table": "skill_library", "project_path": r["project_path"],
                                   "source_type": _get(r, "source_type"), "enabled": _get(r, "enabled"),
                                   "success_rate": rate,
                                   "source_session_ids": [str(s) for s in _json_list(_get(r, "source_session_ids"))]},
                }


def _talk_namespace(value: Any) -> str:
    parts = _json_list(value) if isinstance(value, str) and value.startswith("[") else [value]
    parts = [str(p) for p in parts if p not in (None, "")]
    if not parts or parts[0] in ("global", "user"):
        return "global"
    if parts[0] in ("project", "conversation", "skill") and len(parts) > 1:
        return f"{parts[0]}/{'/'.join(parts[1:])}"
    raise EntryError(f"namespace {value!r} is not global, project, conversation or skill", "namespace")


def _checked_rows(path: Path, fmt: str, table: str) -> Iterator[Any]:
    """The rows of ``table`` in the ``fmt`` database at ``path`` (``_rows``), its tables checked first."""
    with _connect(path) as con:
        _check(con, path, fmt)
        yield from _rows(con, table)


def _talkcody(path: Path) -> Iterator[tuple[str, Any]]:
    for r in _checked_rows(path, "talkcody", "memories"):
        if isinstance(r, _Unreadable):
            yield r.where, r.error
            continue
        where = f"memories {r['id']}"
        try:
            meta = load_json(r["metadata"] or "{}")
        except json.JSONDecodeError as exc:
            yield where, {"__error__": f"metadata is not JSON: {exc.msg}"}
            continue
        meta = meta if isinstance(meta, dict) else {}
        try:
            ns = _talk_namespace(r["namespace"])
        except EntryError as exc:
            yield where, {"__error__": str(exc)}
            continue
        raw: dict[str, Any] = {
            "id": r["id"], "type": r["type"], "content": r["content"], "importance": r["importance"], "namespace": ns,
            "created_at": r["created_at"], "updated_at": r["updated_at"],
            "last_accessed_at": meta.get("lastAccessedAt"),
            "access_count": meta.get("accessCount") if isinstance(meta.get("accessCount"), int) else 0,
            "tags": [str(t) for t in meta.get("tags") or [] if isinstance(t, (str, int))],
            "provenance": {"table": "memories", "namespace": r["namespace"],
                           "extraction_method": meta.get("extractionMethod"),
                           "conversation_id": meta.get("sourceConversationId"),
                           "message_id": meta.get("sourceMessageId"),
                           "consolidated_from": [str(c) for c in meta.get("consolidatedFrom") or []],
                           "metadata_category": meta.get("category")},
        }
        if r["type"] == "semantic" and meta.get("category") in CATEGORIES:
            raw["category"] = meta["category"]
        if isinstance(meta.get("structuredData"), dict) and r["type"] == "semantic":
            raw["structured"] = meta["structuredData"]
        if isinstance(meta.get("episode"), dict):
            raw["episode"] = meta["episode"]
        if isinstance(meta.get("procedure"), dict):
            raw["procedure"] = meta["procedure"]
        if isinstance(meta.get("keywords"), list):
            raw["keywords"] = [str(k) for k in meta["keywords"]]
        if r["type"] == "episodic" and "episode" not in raw:
            # TalkCody keeps the episode in the content when metadata has none: keep it whole
            raw["episode"] = {"situation": r["content"], "action": "(not recorded)", "outcome": "partial"}
        if r["type"] == "procedural" and "procedure" not in raw:
            raw["procedure"] = {"name": (meta.get("category") or "procedure"), "description": r["content"]}
        raw["provenance"] = {k: v for k, v in raw["provenance"].items() if v not in (None, [], "")}
        yield where, raw


def _skill_memory(path: Path) -> Iterator[tuple[str, Any]]:
    for r in _checked_rows(path, "skill-memory", "skill_memory"):
        if isinstance(r, _Unreadable):
            yield r.where, r.error
            continue
        kind = r["kind"]
        mtype, category = NOTE_KIND_MAP.get(kind, ("semantic", None))
        raw: dict[str, Any] = {
            "id": f"skill-memory-{r['id']}", "type": mtype, "category": category, "content": r["delta"],
            "namespace": f"skill/{r['skill_id']}",
            "note": {"kind": kind, "intent": _get(r, "intent") or "", "pinned": bool(_get(r, "pinned", 0)),
                     "hit_count": _get(r, "hit_count", 0) or 0, "recall_count": _get(r, "recall_count", 0) or 0,
                     "tier": _get(r, "tier") or "project"},
            "tags": [str(t) for t in _json_list(_get(r, "tags"))],
            "importance": 0.9 if _get(r, "pinned", 0) else 0.6,
            "created_at": r["created_at"], "last_accessed_at": _get(r, "last_used_at") or r["created_at"],
            "provenance": {k: v for k, v in {
                "table": "skill_memory", "row": r["id"], "project_identity": _get(r, "project_identity"),
                "origin_project": _get(r, "origin_project"), "source_type": _get(r, "source_type"),
                "skill_source": _get(r, "skill_source"), "resolved_path": _get(r, "resolved_path"),
                "skill_content_hash": _get(r, "skill_content_hash")}.items() if v not in (None, "")},
        }
        if mtype == "procedural":
            raw["procedure"] = {"name": raw["note"]["intent"] or "workflow", "description": r["delta"]}
        yield f"skill_memory {r['id']}", raw


# ---------------------------------------------------------------- JSON sources

MAX_JSON_BYTES = 256 * 1024 * 1024


def _json(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise ImportProblem(f"{path}: file is larger than {MAX_JSON_BYTES:,} bytes")
        text = path.read_text("utf-8-sig")
    except OSError as exc:
        raise SkillcError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ImportProblem(f"{path}: not UTF-8 text (nor a SQLite database)") from None
    try:
        doc = load_json(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(f"{path}:{exc.lineno}: malformed JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise ImportProblem(f"{path}: JSON nested too deeply") from None
    if isinstance(doc, str):  # one published example is JSON-encoded twice
        try:
            doc = load_json(doc)
        except json.JSONDecodeError:
            pass
    return doc


_BULLET = re.compile(r"^\s*[-*•]\s+(.+?)\s*$")


def _letta(path: Path) -> Iterator[tuple[str, Any]]:
    doc = _json(path)
    if not isinstance(doc, dict):
        raise ImportProblem(f"{path}: not a Letta agent file (expected a JSON object)")
    if "core_memory" in doc or ("agents" not in doc and "version" in doc):
        raise ImportProblem(
            f"{path}: Letta agent file version {doc.get('version', 'unknown')!s} (v1, 'core_memory') is not "
            "supported; skillc reads the AgentFileSchema format (top-level 'agents' and 'blocks')",
            hint="re-export the agent with a current Letta (GET /v1/agents/{id}/export)")
    missing = [k for k in ("agents", "blocks") if not isinstance(doc.get(k), list)]
    if missing:
        raise ImportProblem(f"{path}: not a Letta AgentFileSchema file: missing list(s) {', '.join(missing)}")
    owners: dict[str, str] = {}
    for agent in doc["agents"]:
        if isinstance(agent, dict):
            for bid in agent.get("block_ids") or []:
                owners.setdefault(str(bid), str(agent.get("name") or agent.get("id") or ""))
    created = doc.get("created_at")
    for n, block in enumerate(doc["blocks"]):
        if not isinstance(block, dict) or not isinstance(block.get("label"), str):
            yield f"blocks[{n}]", {"__error__": "a block needs a 'label'"}
            continue
        label = block["label"]
        bid = str(block.get("id") or f"block-{n}")
        value = block.get("value") or ""
        if not isinstance(value, str):
            yield f"blocks[{n}] ({label})", {"__error__": "block 'value' must be text"}
            continue
        mtype, category, importance = LETTA_LABELS.get(label, ("semantic", "fact", 0.5))
        lines = [ln for ln in value.splitlines() if ln.strip()]
        bullets = [m.group(1) for ln in lines if (m := _BULLET.match(ln))]
        items = bullets if lines and len(bullets) == len(lines) else ([value.strip()] if value.strip() else [])
        for k, text in enumerate(items):
            raw: dict[str, Any] = {
                "id": f"letta-{bid}" + (f"-{k + 1}" if len(items) > 1 else ""),
                "type": mtype, "category": category, "content": text, "importance": importance,
                "keywords": [label], "created_at": created,
                "provenance": {k2: v for k2, v in {
                    "letta_block": bid, "label": label, "agent": owners.get(bid), "read_only": block.get("read_only"),
                    "limit": block.get("limit"), "description": block.get("description"),
                    "revision_id": (doc.get("metadata") or {}).get("revision_id")
                    if isinstance(doc.get("metadata"), dict) else None}.items() if v is not None},
            }
            if mtype == "procedural":
                raw["procedure"] = {"name": label, "description": text}
            yield f"blocks[{n}] ({label})", raw


def _scalar_id(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _mem0(path: Path) -> Iterator[tuple[str, Any]]:
    doc = _json(path)
    items = doc.get("results") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise ImportProblem(f"{path}: not Mem0 get_all output (expected {{\"results\": [...]}} or a list)")
    for n, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("memory"), str):
            yield f"results[{n}]", {"__error__": "an item needs a 'memory' string"}
            continue
        odd = next((k for k in ("id", "run_id") if item.get(k) is not None and not _scalar_id(item[k])), None)
        if odd is not None:  # (an object would become its Python repr in the ID or the namespace)
            yield f"results[{n}]", {"__error__": f"'{odd}' must be a string or a number"}
            continue
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        category = meta.get("category") if meta.get("category") in CATEGORIES else None
        ns = f"conversation/{item['run_id']}" if item.get("run_id") else "global"
        yield f"results[{n}] ({item.get('id')})", {
            "id": str(item.get("id") or f"mem0-{n}"), "type": "semantic", "category": category,
            "content": item["memory"], "namespace": ns,
            "importance": _number(meta.get("importance"), 0.5),  # (out of [0, 1]: refused, not 0.5)
            "keywords": [str(k) for k in meta.get("keywords") or [] if isinstance(k, (str, int))],
            "created_at": item.get("created_at"), "updated_at": item.get("updated_at") or item.get("created_at"),
            "provenance": {k: v for k, v in {
                "mem0_hash": item.get("hash"), "user_id": item.get("user_id"), "agent_id": item.get("agent_id"),
                "run_id": item.get("run_id"), "actor_id": item.get("actor_id"), "role": item.get("role"),
                "expiration_date": item.get("expiration_date")}.items() if isinstance(v, (str, int, float))},
        }


