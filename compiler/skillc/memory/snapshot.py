"""The frozen snapshot: ``snapshot.json``, ``snapshot.sqlite``, ``prompt.md``, ``skills/<id>.md``.

``prepare`` is pure (redact → consolidate → one JSON document); ``write`` puts the files in a folder
(the bundle's ``api/memory/`` or ``skillc memory freeze --out DIR``) and writes nothing else.

``snapshot.sqlite`` holds the *active* entries in the seeds' own schemas, created from
``templates/memory/*.sql`` (the DDL copied from the seeds), so the apps can open it as is:

* Plan Cascade (seed 000): semantic entries of ``global``/``project/*`` → ``project_memories``
  (``project_path`` = the project id, ``*`` for global); episodic → ``episodic_records``; procedural
  (not per-skill notes) → ``skill_library``.
* TalkCody (seed 001): every active entry → ``memories`` (namespace as a JSON array, metadata JSON with
  the structured parts and skillc's provenance), ``memories_fts`` kept in sync by the seed's triggers.
* Seed 003: per-skill notes → ``skill_memory`` (+ ``skill_memory_fts``).

Importance columns hold the *effective* (decayed) importance.  ``PRAGMA user_version`` is
``SNAPSHOT_VERSION``.  The bytes are deterministic for a given SQLite library version: rows go in
in byte order of (namespace, id), there is no journal, and the file is VACUUMed; the file is made
read-only (mode 0444).  Superseded and pruned entries are only in ``snapshot.json``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..discover.walk import path_key
from ..jsonio import compact_json, json_bytes
from ..resources import template_dir
from .consolidate import consolidate
from .load import Problem
from .model import SNAPSHOT_FORMAT, SNAPSHOT_VERSION, MemoryEntry, category_of, epoch, iso, normalize_text
from .redact import Redaction, redact_entries
from .render import SkillMemoryConfig, prompt_section, skill_block
from .settings import MemorySettings


@dataclass(frozen=True, slots=True)
class SkillRef:
    """A skill whose frontmatter opts into skill-memory."""

    id: str
    name: str
    config: SkillMemoryConfig


@dataclass(frozen=True, slots=True)
class Snapshot:
    doc: Mapping[str, Any]  # what snapshot.json holds
    redactions: tuple[Redaction, ...]

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        return self.doc["entries"]


def prepare(entries: Iterable[MemoryEntry], *, settings: MemorySettings, as_of: float,
            problems: Sequence[Problem] = (), files: Sequence[str] = ()) -> Snapshot:
    clean, audit = redact_entries(entries)
    result = consolidate(clean, settings, as_of)
    kept = [c.to_json() for c in result.entries]
    pruned = [c.to_json() for c in result.pruned]
    by_ns: dict[str, int] = {}
    by_cat: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for e in kept:
        by_ns[e["namespace"]] = by_ns.get(e["namespace"], 0) + 1
        by_type[e["type"]] = by_type.get(e["type"], 0) + 1
        cat = category_of(e)  # (a semantic memory without one is a fact: counted as the prompt shows it)
        if cat:
            by_cat[cat] = by_cat.get(cat, 0) + 1
    audit_sorted = sorted(audit, key=lambda r: (path_key(r.entry), r.field, r.kind))
    doc = {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "as_of": iso(as_of),
        "settings": settings.to_json(),
        "inputs": list(files),
        "counts": {
            **result.stats,
            "redactions": sum(r.count for r in audit),
            "by_namespace": dict(sorted(by_ns.items(), key=lambda kv: path_key(kv[0]))),
            "by_category": dict(sorted(by_cat.items())),
            "by_type": dict(sorted(by_type.items())),
        },
        "entries": kept,
        "pruned": pruned,
        "tombstones": [t.to_json() for t in result.tombstones],
        "redactions": [r.to_json() for r in audit_sorted],
        "warnings": list(result.warnings),
        "diagnostics": [p.to_json() for p in problems],
    }
    return Snapshot(doc, tuple(audit_sorted))


def dumps(doc: Mapping[str, Any]) -> str:
    """Sorted keys, one array item per line (line-oriented diffs in git; the C encoder stays fast)."""
    return json_bytes(doc, pretty=True).decode("utf-8")


def skill_notes(entries: Iterable[Mapping[str, Any]], skill: SkillRef) -> list[Mapping[str, Any]]:
    spaces = {f"skill/{skill.id}", f"skill/{skill.name}"}
    return [e for e in entries if e["status"] == "active" and e.get("note") and e["namespace"] in spaces]


def skill_file(skill_id: str) -> str:
    return f"skills/{quote(skill_id, safe='')}.md"


def write(snapshot: Snapshot, out: Path, *, settings: MemorySettings, skills: Sequence[SkillRef] = ()) -> list[str]:
    """Write the snapshot files into ``out`` (created if missing); returns their paths relative to it."""
    out.mkdir(parents=True, exist_ok=True)
    if (out / "skills").is_symlink():
        (out / "skills").unlink()  # never write through a link
    if (out / "skills").is_dir():
        for old in (out / "skills").glob("*.md"):  # blocks of an earlier freeze into the same folder
            _fresh(old)
    written = ["snapshot.json", "snapshot.sqlite", "prompt.md"]
    for name in written:
        _fresh(out / name)
    (out / "snapshot.json").write_text(dumps(snapshot.doc), encoding="utf-8", newline="\n")
    write_sqlite(snapshot.entries, out / "snapshot.sqlite")
    (out / "prompt.md").write_text(
        prompt_section(snapshot.entries, budget=settings.prompt_budget_chars, max_items=settings.max_memories_in_prompt,
                       min_importance=settings.min_importance_for_retrieval, included_types=settings.included_types),
        encoding="utf-8", newline="\n")
    for skill in sorted(skills, key=lambda s: path_key(s.id)):
        block = skill_block(skill.id, skill_notes(snapshot.entries, skill), skill.config)
        rel = skill_file(skill.id)
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(block, encoding="utf-8", newline="\n")
        written.append(rel)
    return written


def _fresh(path: Path) -> None:
    """Unlink a file or link about to be written: never write through a link or into a shared inode."""
    if path.is_symlink() or path.is_file():
        path.unlink()


# ---------------------------------------------------------------- SQLite

def _sql_time(iso_text: str) -> str:
    return iso_text.replace("T", " ").rstrip("Z")


def _ms(iso_text: str) -> int:
    return int(epoch(iso_text) * 1000)


def _project_path(e: Mapping[str, Any]) -> str:
    prov = e.get("provenance") or {}
    if isinstance(prov.get("project_path"), str) and prov["project_path"]:
        return prov["project_path"]
    ns = e["namespace"]
    if ns == "global":
        return "*"
    # Only a project's entries carry its id: `conversation/acme` or `skill/acme` as `acme` would answer
    # Plan Cascade's `WHERE project_path = 'acme'` beside the project's own records.
    return ns.split("/", 1)[1] if ns.startswith("project/") else ns


def _namespace_array(ns: str) -> str:
    # (every JSON column is written as the apps write it, JSON.stringify / serde_json: no spaces)
    return compact_json(ns.split("/", 1))


def _metadata(e: Mapping[str, Any]) -> str:
    prov = e.get("provenance") or {}
    meta: dict[str, Any] = {
        "extractedAt": _ms(e["created_at"]),
        "extractionMethod": "imported",
        "accessCount": e["access_count"],
        "lastAccessedAt": _ms(e["last_accessed_at"]),
        "tags": e["tags"],
        "keywords": e["keywords"],
        "skillc": {"id": e["id"], "source": e["source"], "importance": e["importance"],
                   "effectiveImportance": e["effective_importance"], "provenance": prov},
    }
    if e.get("category"):
        meta["category"] = e["category"]
    if e.get("merged_from"):
        meta["consolidatedFrom"] = [m["id"] for m in e["merged_from"]]
    ns = e["namespace"]
    if ns.startswith("conversation/"):
        meta["sourceConversationId"] = ns.split("/", 1)[1]
    elif ns.startswith("project/"):
        meta["sourceProjectId"] = ns.split("/", 1)[1]
    for key, name in (("episode", "episode"), ("procedure", "procedure"), ("structured", "structuredData"),
                      ("note", "skillNote")):
        if e.get(key):
            meta[name] = e[key]
    return compact_json(meta)


def _record_type(e: Mapping[str, Any]) -> str:
    rt = (e.get("provenance") or {}).get("record_type")
    if rt in ("success", "failure", "discovery"):
        return rt
    return {"success": "success", "failure": "failure"}.get(e["episode"]["outcome"], "discovery")


def _enabled(e: Mapping[str, Any]) -> int:
    # A skill switched off in Plan Cascade stays off: the app's lookups filter on enabled = 1, so
    # writing 1 for every row would bring a disabled skill back.
    return 0 if (e.get("provenance") or {}).get("enabled") in (0, False, "0") else 1


def _note_source_type(e: Mapping[str, Any]) -> str:
    # An imported note keeps the plugin's own source_type (``historian`` marks the notes its historian
    # promoted): replacing it with skillc's source would lose that on the way back into the table.
    given = (e.get("provenance") or {}).get("source_type")
    return given if isinstance(given, str) and given else e["source"]


def _library_body(p: Mapping[str, Any]) -> str:
    if p.get("body"):
        return p["body"]
    lines = [f"# {p['name']}", "", p["description"]]
    if p.get("steps"):
        lines += ["", *(f"{i}. {s}" for i, s in enumerate(p["steps"], 1))]
    return "\n".join(lines) + "\n"


def write_sqlite(entries: Sequence[Mapping[str, Any]], path: Path) -> None:
    try:
        _write_sqlite(entries, path)
    except sqlite3.OperationalError as exc:
        # SQLite's "database or disk is full" names no file, and is no OSError: said as one, with the path
        if "full" not in str(exc) and "I/O" not in str(exc):
            raise
        raise OSError(errno.ENOSPC if "full" in str(exc) else errno.EIO, str(exc), os.fspath(path)) from exc


def _write_sqlite(entries: Sequence[Mapping[str, Any]], path: Path) -> None:
    _fresh(path)
    tmp = path.with_name(path.name + ".tmp")
    _fresh(tmp)
    con = sqlite3.connect(tmp, isolation_level=None)
    try:
        con.execute("PRAGMA page_size = 4096")
        con.execute("PRAGMA journal_mode = OFF")
        con.execute("PRAGMA synchronous = OFF")
        deferred: list[str] = []  # indexes, FTS tables and triggers: created after the bulk insert (faster)
        for name in ("plan_cascade.sql", "talkcody.sql", "skill_memory.sql"):
            for stmt in _statements((template_dir() / "memory" / name).read_text("utf-8")):
                (con.execute(stmt) if stmt.lstrip().upper().startswith("CREATE TABLE") else deferred.append(stmt))
        con.execute("BEGIN")
        active = [e for e in entries if e["status"] == "active"]
        con.executemany(
            "INSERT INTO memories (id, type, content, importance, namespace, metadata, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((e["id"], e["type"], e["content"], min(1.0, max(0.0, e["effective_importance"])),
              _namespace_array(e["namespace"]), _metadata(e), _ms(e["created_at"]), _ms(e["updated_at"]))
             for e in active))
        con.executemany(
            "INSERT OR IGNORE INTO project_memories (id, project_path, category, content, keywords, importance, "
            "access_count, source_session_id, source_context, created_at, updated_at, last_accessed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((e["id"], _project_path(e), e.get("category") or "fact", e["content"],
              compact_json(e["keywords"]), e["effective_importance"], e["access_count"],
              (e.get("provenance") or {}).get("session_id"), (e.get("provenance") or {}).get("source_context"),
              _sql_time(e["created_at"]), _sql_time(e["updated_at"]), _sql_time(e["last_accessed_at"]))
             for e in active if e["type"] == "semantic" and not e.get("note")
             and (e["namespace"] == "global" or e["namespace"].startswith("project/"))))
        con.executemany(
            "INSERT INTO episodic_records (id, project_path, session_id, record_type, task_summary, approach_summary, "
            "outcome_summary, tools_used, keywords, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((e["id"], _project_path(e),
              str((e.get("provenance") or {}).get("session_id") or
                  (e["namespace"].split("/", 1)[1] if e["namespace"].startswith("conversation/") else "")),
              _record_type(e), e["episode"]["situation"], e["episode"]["action"],
              e["episode"].get("reasoning") or e["content"],
              compact_json((e.get("provenance") or {}).get("tools_used") or []),
              compact_json(e["keywords"]), _sql_time(e["created_at"]))
             for e in active if e["type"] == "episodic"))
        con.executemany(
            "INSERT INTO skill_library (id, project_path, name, description, tags, body, source_type, "
            "source_session_ids, usage_count, success_rate, keywords, enabled, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((e["id"], _project_path(e), e["procedure"]["name"], e["procedure"]["description"],
              compact_json(e["tags"]), _library_body(e["procedure"]),
              (e.get("provenance") or {}).get("source_type") if (e.get("provenance") or {}).get("source_type")
              in ("generated", "refined") else "generated",
              compact_json((e.get("provenance") or {}).get("source_session_ids") or []),
              e["access_count"], _unit((e.get("provenance") or {}).get("success_rate"), 1.0),
              compact_json(e["keywords"]), _enabled(e), _sql_time(e["created_at"]), _sql_time(e["updated_at"]))
             for e in active if e["type"] == "procedural" and e.get("procedure") and not e.get("note")))
        con.executemany(
            "INSERT OR IGNORE INTO skill_memory (skill_id, tier, skill_source, project_identity, intent, kind, delta, "
            "tags, hit_count, pinned, normalized_hash, created_at, last_used_at, recall_count, origin_project, "
            "source_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((e["namespace"].split("/", 1)[1], e["note"]["tier"], (e.get("provenance") or {}).get("skill_source"),
              "*" if e["note"]["tier"] == "global" else str((e.get("provenance") or {}).get("project_identity") or ""),
              e["note"].get("intent", ""), e["note"]["kind"], e["content"], compact_json(e["tags"]),
              e["note"]["hit_count"], int(e["note"]["pinned"]),
              hashlib.md5(normalize_text(e["content"]).encode("utf-8")).hexdigest(),
              _ms(e["created_at"]), _ms(e["last_accessed_at"]), e["note"]["recall_count"],
              (e.get("provenance") or {}).get("origin_project"), _note_source_type(e))
             for e in active if e.get("note")))
        for stmt in deferred:
            con.execute(stmt)
        for fts in ("memories_fts", "skill_memory_fts"):  # index the rows inserted before the triggers existed
            con.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
        con.execute("COMMIT")
        con.execute(f"PRAGMA user_version = {int(SNAPSHOT_VERSION)}")
        con.execute("VACUUM")
    finally:
        con.close()
    os.replace(tmp, path)
    os.chmod(path, 0o444)


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements (``sqlite3.complete_statement`` knows about BEGIN … END)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def _unit(value: Any, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return default
