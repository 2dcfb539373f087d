"""Secrets never leave: every text field of every memory goes through ``skillc.secrets.redact``,
strictly (the publishing gate's reading: any value assigned to a password/secret/token/key name is
redacted unless it is plainly a reference; lint's guess that `hunter2` is a stand-in is not taken).

Each likely secret becomes ``[REDACTED:<kind>]``; the audit lists (entry, field, kind, count), never
the value.  Used when memories are imported, extracted and frozen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..secrets import redact as redact_text
from ..secrets import scan
from .model import MemoryEntry


@dataclass(frozen=True, slots=True)
class Redaction:
    entry: str
    field: str
    kind: str
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "field": self.field, "kind": self.kind, "count": self.count}


def _scrub(value: str, entry: str, fld: str, audit: list[Redaction]) -> str:
    if not value:
        return value
    text, counts = redact_text(value, strict=True)
    for kind, n in counts.items():
        audit.append(Redaction(entry, fld, kind, n))
    return text


def _scrub_list(values: tuple[str, ...], entry: str, fld: str, audit: list[Redaction]) -> tuple[str, ...]:
    return tuple(_scrub(v, entry, f"{fld}[{i}]", audit) for i, v in enumerate(values))


def _scrub_id(value: str, entry: str, fld: str, audit: list[Redaction]) -> str:
    """An identifier (``id``, ``supersedes``) redacted like text, plus a short hash of what it was, so
    two IDs that differed still differ and a reference still names the entry it named."""
    text = _scrub(value, entry, fld, audit)
    if text == value:
        return value
    return f"{text}~{hashlib.sha256(value.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def _texts(e: MemoryEntry) -> list[str]:
    out = [e.id, e.namespace, e.category or "", e.source, *e.supersedes,
           e.content, *e.keywords, *e.tags, e.note.intent if e.note else ""]
    out += [k for k in e.provenance if isinstance(k, str)]  # (keys are published too)
    out += [v for v in e.provenance.values() if isinstance(v, str)]
    out += [x for v in e.provenance.values() if isinstance(v, list) for x in v if isinstance(x, str)]
    if e.episode:
        out += [e.episode.situation, e.episode.action, e.episode.reasoning or "", *e.episode.learnings]
    if e.procedure:
        p = e.procedure
        out += [p.name, p.description, *p.steps, *p.triggers, p.body or ""]
    if e.structured:
        out += [e.structured.key, e.structured.value]
    return out


def redact_entry(e: MemoryEntry) -> tuple[MemoryEntry, list[Redaction]]:
    # Fast path: one scan over every field (NUL-separated).  A secret in any field is also found in
    # the joined text, so an empty scan means there is nothing to redact field by field.
    if not scan("\n\0\n".join(_texts(e)), strict=True):
        return e, []
    # The audit names the entry by its redacted ID (the audit is published too).
    id_audit: list[Redaction] = []
    entry_id = _scrub_id(e.id, "", "id", id_audit)
    audit = [replace(r, entry=entry_id) for r in id_audit]
    changes: dict[str, Any] = {
        "id": entry_id,
        "namespace": _scrub(e.namespace, entry_id, "namespace", audit),
        "category": _scrub(e.category, entry_id, "category", audit) if e.category else e.category,
        "source": _scrub(e.source, entry_id, "source", audit),
        "supersedes": tuple(_scrub_id(v, entry_id, f"supersedes[{i}]", audit) for i, v in enumerate(e.supersedes)),
        "content": _scrub(e.content, entry_id, "content", audit),
        "keywords": _scrub_list(e.keywords, entry_id, "keywords", audit),
        "tags": _scrub_list(e.tags, entry_id, "tags", audit),
    }
    prov = {}
    for key, value in e.provenance.items():
        if isinstance(value, str):
            value = _scrub(value, entry_id, f"provenance.{key}", audit)
        elif isinstance(value, list):
            value = [_scrub(v, entry_id, f"provenance.{key}[{i}]", audit) if isinstance(v, str) else v
                     for i, v in enumerate(value)]
        if isinstance(key, str):
            key = _scrub(key, entry_id, "provenance key", audit)
        prov[key] = value
    changes["provenance"] = prov
    if e.episode:
        ep = e.episode
        changes["episode"] = replace(
            ep, situation=_scrub(ep.situation, entry_id, "episode.situation", audit),
            action=_scrub(ep.action, entry_id, "episode.action", audit),
            reasoning=_scrub(ep.reasoning or "", entry_id, "episode.reasoning", audit) or None,
            learnings=_scrub_list(ep.learnings, entry_id, "episode.learnings", audit))
    if e.procedure:
        pr = e.procedure
        changes["procedure"] = replace(
            pr, name=_scrub(pr.name, entry_id, "procedure.name", audit),
            description=_scrub(pr.description, entry_id, "procedure.description", audit),
            steps=_scrub_list(pr.steps, entry_id, "procedure.steps", audit),
            triggers=_scrub_list(pr.triggers, entry_id, "procedure.triggers", audit),
            body=_scrub(pr.body or "", entry_id, "procedure.body", audit) or None)
    if e.note and e.note.intent:
        changes["note"] = replace(e.note, intent=_scrub(e.note.intent, entry_id, "note.intent", audit))
    if e.structured:
        changes["structured"] = replace(e.structured, key=_scrub(e.structured.key, entry_id, "structured.key", audit),
                                        value=_scrub(e.structured.value, entry_id, "structured.value", audit))
    if not audit:
        return e, []
    return replace(e, **changes), audit


def redact_entries(entries: Iterable[MemoryEntry]) -> tuple[tuple[MemoryEntry, ...], tuple[Redaction, ...]]:
    out: list[MemoryEntry] = []
    audit: list[Redaction] = []
    for e in entries:
        clean, found = redact_entry(e)
        out.append(clean)
        audit.extend(found)
    return tuple(out), tuple(audit)
