"""Secrets never leave: every text field of every memory goes through ``skillc.secrets.redact``.

Each likely secret becomes ``[REDACTED:<kind>]``; the audit lists (entry, field, kind, count), never
the value.  Used when memories are imported, extracted and frozen.
"""

from __future__ import annotations

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
    text, counts = redact_text(value)
    for kind, n in counts.items():
        audit.append(Redaction(entry, fld, kind, n))
    return text


def _scrub_list(values: tuple[str, ...], entry: str, fld: str, audit: list[Redaction]) -> tuple[str, ...]:
    return tuple(_scrub(v, entry, f"{fld}[{i}]", audit) for i, v in enumerate(values))


def _texts(e: MemoryEntry) -> list[str]:
    out = [e.content, *e.keywords, *e.tags, e.note.intent if e.note else ""]
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
    if not scan("\n\0\n".join(_texts(e))):
        return e, []
    audit: list[Redaction] = []
    changes: dict[str, Any] = {
        "content": _scrub(e.content, e.id, "content", audit),
        "keywords": _scrub_list(e.keywords, e.id, "keywords", audit),
        "tags": _scrub_list(e.tags, e.id, "tags", audit),
    }
    prov = {}
    for key, value in e.provenance.items():
        if isinstance(value, str):
            value = _scrub(value, e.id, f"provenance.{key}", audit)
        elif isinstance(value, list):
            value = [_scrub(v, e.id, f"provenance.{key}[{i}]", audit) if isinstance(v, str) else v
                     for i, v in enumerate(value)]
        prov[key] = value
    changes["provenance"] = prov
    if e.episode:
        ep = e.episode
        changes["episode"] = replace(
            ep, situation=_scrub(ep.situation, e.id, "episode.situation", audit),
            action=_scrub(ep.action, e.id, "episode.action", audit),
            reasoning=_scrub(ep.reasoning or "", e.id, "episode.reasoning", audit) or None,
            learnings=_scrub_list(ep.learnings, e.id, "episode.learnings", audit))
    if e.procedure:
        pr = e.procedure
        changes["procedure"] = replace(
            pr, name=_scrub(pr.name, e.id, "procedure.name", audit),
            description=_scrub(pr.description, e.id, "procedure.description", audit),
            steps=_scrub_list(pr.steps, e.id, "procedure.steps", audit),
            triggers=_scrub_list(pr.triggers, e.id, "procedure.triggers", audit),
            body=_scrub(pr.body or "", e.id, "procedure.body", audit) or None)
    if e.note and e.note.intent:
        changes["note"] = replace(e.note, intent=_scrub(e.note.intent, e.id, "note.intent", audit))
    if e.structured:
        changes["structured"] = replace(e.structured, key=_scrub(e.structured.key, e.id, "structured.key", audit),
                                        value=_scrub(e.structured.value, e.id, "structured.value", audit))
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
