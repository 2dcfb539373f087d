"""The memory model: typed, namespaced entries (schema: ``schemas/memory.schema.json``).

One ``MemoryEntry`` is one memory as a repository stores it (a YAML item or a JSONL line) or as an
importer reads it from a runtime store.  The three types and their structured parts follow seed 001
§3 (semantic / episodic ``episode`` / procedural ``procedure``), semantic memories carry seed 000's
category, per-skill notes carry seed 003's fields (``note``).  ``entry_from_dict`` turns a raw
mapping into an entry or raises ``EntryError`` with a message that names the field; the loader adds
the file and line.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import functools
import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .. import secrets

TYPES = ("semantic", "episodic", "procedural")
CATEGORIES = ("preference", "convention", "pattern", "correction", "fact")
OUTCOMES = ("success", "partial", "failure")
NOTE_KINDS = ("gotcha", "discovery", "fix", "workflow")
TIERS = ("project", "global")
NAMESPACE_KINDS = ("global", "project", "conversation", "skill")
BADGES = {"preference": "[PREF]", "convention": "[CONV]", "pattern": "[PATN]", "correction": "[WARN]",
          "fact": "[FACT]"}

MAX_CONTENT_CHARS = 8_000  # longer text is capped (and reported)
MAX_FIELD_CHARS = 2_000  # keywords, tags, intents, names, steps…
MAX_LIST_ITEMS = 100
SNAPSHOT_FORMAT = "skillc-memory-snapshot"
SNAPSHOT_VERSION = 1

_NAMESPACE = re.compile(r"^(global|(project|conversation|skill)/[^\x00-\x1f\x7f]+)$")
# Control characters (C0 but tab and line ends, DEL, C1: YAML turns U+0085 into a line break) and lone
# surrogates (a JSON "\\ud800" escape: no UTF-8 file can hold one).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_WS = re.compile(r"\s+")


class EntryError(ValueError):
    """A raw entry is not a valid memory; ``field`` names where (for the loader's line lookup)."""

    def __init__(self, message: str, field: str | None = None, repairable: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.repairable = repairable  # --keep-going can repair it (cap a value, strip control characters)


@dataclass(frozen=True, slots=True)
class Episode:
    situation: str
    action: str
    outcome: str  # success | partial | failure
    reasoning: str | None = None
    learnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Procedure:
    name: str
    description: str
    steps: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    priority: int | None = None
    body: str | None = None  # skillc extension: the Markdown body of a Plan Cascade skill_library row


@dataclass(frozen=True, slots=True)
class SkillNote:
    kind: str  # gotcha | discovery | fix | workflow
    intent: str = ""
    pinned: bool = False
    hit_count: int = 0
    recall_count: int = 0
    tier: str = "project"  # project | global


@dataclass(frozen=True, slots=True)
class Structured:
    """Seed 001 ``structuredData`` of a semantic memory."""

    key: str
    value: str
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    id: str
    type: str
    content: str
    namespace: str = "global"
    category: str | None = None
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    access_count: int = 0
    created_at: str = ""
    updated_at: str = ""
    last_accessed_at: str = ""
    source: str = "file"
    provenance: Mapping[str, Any] = field(default_factory=dict)
    supersedes: tuple[str, ...] = ()
    episode: Episode | None = None
    procedure: Procedure | None = None
    note: SkillNote | None = None
    structured: Structured | None = None
    forget: bool = False  # a tombstone: forget memories matching ``content`` (or the ids in ``supersedes``)

    @property
    def namespace_kind(self) -> str:
        return self.namespace.split("/", 1)[0]

    @property
    def namespace_id(self) -> str:
        return self.namespace.split("/", 1)[1] if "/" in self.namespace else ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "content": self.content,
            "namespace": self.namespace,
            "keywords": list(self.keywords),
            "tags": list(self.tags),
            "importance": _round(self.importance),
            "access_count": self.access_count,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_accessed_at": self.last_accessed_at,
            "source": self.source,
            "provenance": dict(self.provenance),
        }
        if self.category:
            out["category"] = self.category
        if self.supersedes:
            out["supersedes"] = list(self.supersedes)
        if self.forget:
            out["forget"] = True
        if self.episode:
            e = self.episode
            out["episode"] = {"situation": e.situation, "action": e.action, "outcome": e.outcome,
                              **({"reasoning": e.reasoning} if e.reasoning else {}),
                              **({"learnings": list(e.learnings)} if e.learnings else {})}
        if self.procedure:
            p = self.procedure
            out["procedure"] = {"name": p.name, "description": p.description,
                                **({"steps": list(p.steps)} if p.steps else {}),
                                **({"triggers": list(p.triggers)} if p.triggers else {}),
                                **({"priority": p.priority} if p.priority is not None else {}),
                                **({"body": p.body} if p.body else {})}
        if self.note:
            n = self.note
            out["note"] = {"kind": n.kind, "intent": n.intent, "pinned": n.pinned, "hit_count": n.hit_count,
                           "recall_count": n.recall_count, "tier": n.tier}
        if self.structured:
            s = self.structured
            out["structured"] = {"key": s.key, "value": s.value, "confidence": _round(s.confidence)}
        return out


def _round(x: float) -> float:
    return round(float(x), 6)


# ---------------------------------------------------------------- normalisation helpers

def normalize_text(text: str) -> str:
    """Lower-case, whitespace collapsed, trimmed: the key of exact-duplicate detection."""
    return _WS.sub(" ", text.lower()).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def derived_id(namespace: str, content: str) -> str:
    """A stable id for an entry written without one."""
    return "m-" + hashlib.sha256(f"{namespace}\0{normalize_text(content)}".encode()).hexdigest()[:16]


def iso(ts: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC (``2026-02-10T09:30:00Z``)."""
    return _dt.datetime.fromtimestamp(int(ts), _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any, name: str) -> str:
    """Any timestamp a store writes (ISO 8601, SQLite ``datetime('now')``, epoch s or ms, YAML dates)."""
    if isinstance(value, bool):
        raise EntryError(f"'{name}' must be a timestamp, not {value!r}", name)
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise EntryError(f"'{name}' must be a timestamp, not {value!r}", name)
        seconds = value / 1000 if value > 1e11 else value  # epoch milliseconds (TalkCody, seed 003)
        if seconds > 253402300799:
            raise EntryError(f"'{name}' {value!r} is beyond the year 9999", name)
        return iso(seconds)
    if isinstance(value, _dt.datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
        try:
            dt = dt.astimezone(_dt.UTC)
        except OverflowError:  # (0001-01-01T00:00:00+01:00 or 9999-12-31T23:59:59-05:00 in UTC)
            when = "after the year 9999" if value.year > 1 else "before 1970"
            raise EntryError(f"'{name}' {value.isoformat()} is {when}", name) from None
        if dt.year < 1970:  # (like a negative number of seconds: no memory is older than the epoch)
            raise EntryError(f"'{name}' {dt.isoformat()} is before 1970", name)
        return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, _dt.date):
        if value.year < 1970:
            raise EntryError(f"'{name}' {value.isoformat()} is before 1970", name)
        return f"{value.isoformat()}T00:00:00Z"
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return parse_time(float(text), name)
        try:
            dt = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1))
        except ValueError:
            raise EntryError(f"'{name}' is not a timestamp: {value!r} (use ISO 8601, e.g. 2026-02-10T09:30:00Z)",
                             name) from None
        return parse_time(dt, name)
    raise EntryError(f"'{name}' must be a timestamp, not {type(value).__name__}", name)


def _keyword(k: str) -> str:
    """A keyword as matched (lower case), unless it looks like a secret: lower-casing would hide an
    AWS key or a JWT from the redaction that follows (``memory.redact``)."""
    k = k.strip()
    return k if secrets.scan(k) else k.lower()


def category_of(entry: Mapping[str, Any]) -> str | None:
    """The category a memory is filed under (an entry as published): a semantic memory written
    without one is a fact, as its badge and the prompt show it (seed 000); None for the other types."""
    if entry.get("type") != "semantic":
        return None
    return entry.get("category") or "fact"


@functools.lru_cache(maxsize=65536)
def epoch(iso_text: str) -> float:
    """Seconds since the epoch of a ``YYYY-MM-DDTHH:MM:SSZ`` time (the form ``parse_time`` writes)."""
    t = iso_text
    if len(t) != 20 or t[4] != "-" or t[10] != "T" or t[19] != "Z":
        return _dt.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.UTC).timestamp()
    return float(calendar.timegm((int(t[0:4]), int(t[5:7]), int(t[8:10]), int(t[11:13]), int(t[14:16]),
                                  int(t[17:19]), 0, 0, 0)))


# ---------------------------------------------------------------- raw mapping -> entry

_KNOWN = frozenset({
    "id", "type", "category", "content", "namespace", "keywords", "tags", "importance", "access_count",
    "created_at", "updated_at", "last_accessed_at", "source", "provenance", "supersedes", "episode",
    "procedure", "note", "structured", "forget",
})


@dataclass(frozen=True, slots=True)
class Repairs:
    """What ``entry_from_dict(..., repair=True)`` changed (reported by the loader)."""

    messages: tuple[tuple[str, str], ...] = ()  # (field, message)


def _text(raw: Any, name: str, limit: int, repair: bool, notes: list[tuple[str, str]], required: bool = True,
          allow_empty: bool = False) -> str:
    if raw is None:
        if required:
            raise EntryError(f"'{name}' is required", name)
        return ""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise EntryError(f"'{name}' must be text, not {type(raw).__name__}", name)
    text = str(raw).replace("\r\n", "\n")
    if _CONTROL.search(text):
        bad = _CONTROL.search(text).group()
        if not repair:
            what = "a lone surrogate" if 0xD800 <= ord(bad) <= 0xDFFF else "a control character"
            raise EntryError(f"'{name}' contains {what} (U+{ord(bad):04X})", name, repairable=True)
        surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in _CONTROL.findall(text))
        text = _CONTROL.sub("", text)
        notes.append((name, f"'{name}': control characters{' and lone surrogates' if surrogate else ''} removed"))
    if len(text) > limit:
        if not repair:
            raise EntryError(f"'{name}' is {len(text):,} characters; the limit is {limit:,}", name, repairable=True)
        notes.append((name, f"'{name}': {len(text):,} characters capped at {limit:,}"))
        text = text[:limit]
    if required and not allow_empty and not text.strip():
        raise EntryError(f"'{name}' must not be empty", name)
    return text


def _text_list(raw: Any, name: str, repair: bool, notes: list[tuple[str, str]]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise EntryError(f"'{name}' must be a list of strings", name)
    if len(raw) > MAX_LIST_ITEMS:
        if not repair:
            raise EntryError(f"'{name}' has {len(raw)} items; the limit is {MAX_LIST_ITEMS}", name, repairable=True)
        notes.append((name, f"'{name}': {len(raw)} items capped at {MAX_LIST_ITEMS}"))
        raw = raw[:MAX_LIST_ITEMS]
    return tuple(_text(v, f"{name}[{i}]", MAX_FIELD_CHARS, repair, notes) for i, v in enumerate(raw))


def _number(raw: Any, name: str, lo: float, hi: float, default: float) -> float:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise EntryError(f"'{name}' must be a number between {lo:g} and {hi:g}, not {raw!r}", name)
    if not lo <= raw <= hi:
        raise EntryError(f"'{name}' must be between {lo:g} and {hi:g}, not {raw!r}", name)
    return float(raw)


def _count(raw: Any, name: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise EntryError(f"'{name}' must be a non-negative integer, not {raw!r}", name)
    if raw > MAX_COUNT:
        raise EntryError(f"'{name}' {raw} is larger than {MAX_COUNT} (the snapshot's SQLite integers)", name)
    return raw


MAX_COUNT = 2**63 - 1


def _mapping(raw: Any, name: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise EntryError(f"'{name}' must be a mapping", name)
    return raw


def _shown(name: Any) -> str:
    """A name as a message quotes it: a lone surrogate or a control character escaped (``\\ud800``),
    since the message is printed and written to snapshot.json, which neither can hold."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(name))


def _unknown(raw: Mapping[str, Any], known: set[str] | frozenset[str], where: str) -> None:
    extra = sorted((k for k in raw if k not in known), key=str)
    if extra:
        prefix = f"{where}." if where else ""
        raise EntryError(f"unknown field '{prefix}{_shown(extra[0])}' (known: {', '.join(sorted(known))})",
                         f"{prefix}{extra[0]}")


def check_namespace(ns: Any, name: str = "namespace") -> str:
    # (_NAMESPACE leaves out C0 and DEL; C1 and lone surrogates are refused as in every text field:
    # a surrogate made snapshot.json unwritable, U+0085 reached it)
    if not isinstance(ns, str) or not _NAMESPACE.match(ns) or _CONTROL.search(ns):
        raise EntryError(
            f"'{name}' must be 'global', 'project/<id>', 'conversation/<id>' or 'skill/<skill-id>', not {ns!r}", name)
    return ns


def _provenance(raw: Any, repair: bool, notes: list[tuple[str, str]]) -> dict[str, Any]:
    if raw is None:
        return {}
    data = _mapping(raw, "provenance")
    out: dict[str, Any] = {}
    for key, value in data.items():
        # Keys are published too (snapshot.json, the SQLite metadata): a lone surrogate made the
        # snapshot unwritable and a control character reached it, as in a value.
        bad = _CONTROL.search(str(key))
        if bad:
            what = "a lone surrogate" if 0xD800 <= ord(bad.group()) <= 0xDFFF else "a control character"
            if not repair:
                raise EntryError(f"'provenance' key contains {what} (U+{ord(bad.group()):04X})", "provenance",
                                 repairable=True)
            notes.append(("provenance", "'provenance' key: control characters removed"))
            key = _CONTROL.sub("", str(key))
        if isinstance(value, (bool, int)) or value is None:
            out[str(key)] = value
        elif isinstance(value, float):
            out[str(key)] = value if math.isfinite(value) else None
        elif isinstance(value, (str, _dt.date)):
            out[str(key)] = _text(str(value), f"provenance.{key}", MAX_FIELD_CHARS, repair, notes, required=False)
        elif isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value):
            out[str(key)] = [v if not isinstance(v, str) else
                             _text(v, f"provenance.{key}", MAX_FIELD_CHARS, repair, notes) for v in value[:MAX_LIST_ITEMS]]
        else:
            raise EntryError(f"'provenance.{key}' must be a scalar or a list of scalars", f"provenance.{key}")
    return dict(sorted(out.items()))


def entry_from_dict(raw: Any, *, default_time: str, source: str = "file", repair: bool = False,
                    provenance: Mapping[str, Any] | None = None) -> tuple[MemoryEntry, Repairs]:
    """Validate and normalise one raw entry.  Raises ``EntryError``; with ``repair`` a too-long value is
    capped and control characters are removed instead (each change is listed in ``Repairs``).  The
    steps run in the order of the fields, so the first problem found is the first one reported."""
    if not isinstance(raw, dict):
        raise EntryError(f"a memory entry must be a mapping, not {type(raw).__name__}")
    _unknown(raw, _KNOWN, "")
    notes: list[tuple[str, str]] = []
    mtype, category = _type_and_category(raw)
    content = _text(raw.get("content"), "content", MAX_CONTENT_CHARS, repair, notes)
    namespace = check_namespace(raw.get("namespace", "global"))
    forget = raw.get("forget", False)
    if not isinstance(forget, bool):
        raise EntryError("'forget' must be true or false", "forget")
    episode = _episode(raw, mtype, repair, notes)
    procedure = _procedure(raw, mtype, repair, notes)
    note = _note(raw, namespace, repair, notes)
    structured = _structured(raw, mtype, repair, notes)
    created, updated, accessed = _times(raw, default_time)
    src = _text(raw.get("source", source), "source", 100, repair, notes)
    prov = _provenance(raw.get("provenance"), repair, notes)
    if provenance:
        prov = dict(sorted({**prov, **provenance}.items()))
    rid = _entry_id(raw, namespace, content)
    supersedes = _supersedes(raw)
    keywords = tuple(dict.fromkeys(_keyword(k) for k in _text_list(raw.get("keywords"), "keywords", repair, notes)
                                   if k.strip()))
    entry = MemoryEntry(
        id=rid, type=mtype, content=content, namespace=namespace, category=category,
        keywords=keywords, tags=tuple(dict.fromkeys(_text_list(raw.get("tags"), "tags", repair, notes))),
        importance=_number(raw.get("importance"), "importance", 0, 1, 0.5),
        access_count=_count(raw.get("access_count"), "access_count"),
        created_at=created, updated_at=updated, last_accessed_at=accessed, source=src, provenance=prov,
        supersedes=supersedes, episode=episode, procedure=procedure, note=note,
        structured=structured, forget=forget,
    )
    return entry, Repairs(tuple(notes))


def _type_and_category(raw: Mapping[str, Any]) -> tuple[str, str | None]:
    mtype = raw.get("type", "semantic")
    if mtype not in TYPES:
        raise EntryError(f"'type' must be one of {', '.join(TYPES)}, not {mtype!r}", "type")
    category = raw.get("category")
    if category is not None:
        if category not in CATEGORIES:
            raise EntryError(f"'category' must be one of {', '.join(CATEGORIES)}, not {category!r}", "category")
        if mtype != "semantic":
            raise EntryError(f"'category' applies to semantic memories only (this one is {mtype})", "category")
    return mtype, category


def _episode(raw: Mapping[str, Any], mtype: str, repair: bool, notes: list[tuple[str, str]]) -> Episode | None:
    episode = None
    if raw.get("episode") is not None:
        ep = _mapping(raw["episode"], "episode")
        _unknown(ep, {"situation", "action", "outcome", "reasoning", "learnings"}, "episode")
        outcome = ep.get("outcome")
        if outcome not in OUTCOMES:
            raise EntryError(f"'episode.outcome' must be one of {', '.join(OUTCOMES)}, not {outcome!r}", "episode.outcome")
        episode = Episode(
            _text(ep.get("situation"), "episode.situation", MAX_CONTENT_CHARS, repair, notes),
            _text(ep.get("action"), "episode.action", MAX_CONTENT_CHARS, repair, notes),
            outcome,
            _text(ep.get("reasoning"), "episode.reasoning", MAX_CONTENT_CHARS, repair, notes, required=False) or None,
            _text_list(ep.get("learnings"), "episode.learnings", repair, notes),
        )
    if mtype == "episodic" and episode is None:
        raise EntryError("an episodic memory needs 'episode' (situation, action, outcome)", "episode")
    if mtype != "episodic" and episode is not None:
        raise EntryError(f"'episode' applies to episodic memories only (this one is {mtype})", "episode")
    return episode


def _procedure(raw: Mapping[str, Any], mtype: str, repair: bool, notes: list[tuple[str, str]]) -> Procedure | None:
    if raw.get("procedure") is None:
        return None
    pr = _mapping(raw["procedure"], "procedure")
    _unknown(pr, {"name", "description", "steps", "triggers", "priority", "body"}, "procedure")
    priority = pr.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise EntryError("'procedure.priority' must be an integer", "procedure.priority")
    procedure = Procedure(
        _text(pr.get("name"), "procedure.name", MAX_FIELD_CHARS, repair, notes),
        _text(pr.get("description"), "procedure.description", MAX_CONTENT_CHARS, repair, notes),
        _text_list(pr.get("steps"), "procedure.steps", repair, notes),
        _text_list(pr.get("triggers"), "procedure.triggers", repair, notes),
        priority,
        _text(pr.get("body"), "procedure.body", MAX_CONTENT_CHARS, repair, notes, required=False) or None,
    )
    if mtype != "procedural":
        raise EntryError(f"'procedure' applies to procedural memories only (this one is {mtype})", "procedure")
    return procedure


def _note(raw: Mapping[str, Any], namespace: str, repair: bool, notes: list[tuple[str, str]]) -> SkillNote | None:
    if raw.get("note") is None:
        return None
    nt = _mapping(raw["note"], "note")
    _unknown(nt, {"kind", "intent", "pinned", "hit_count", "recall_count", "tier"}, "note")
    if nt.get("kind") not in NOTE_KINDS:
        raise EntryError(f"'note.kind' must be one of {', '.join(NOTE_KINDS)}, not {nt.get('kind')!r}", "note.kind")
    if nt.get("tier", "project") not in TIERS:
        raise EntryError(f"'note.tier' must be project or global, not {nt.get('tier')!r}", "note.tier")
    pinned = nt.get("pinned", False)
    if not isinstance(pinned, bool):
        raise EntryError("'note.pinned' must be true or false", "note.pinned")
    note = SkillNote(nt["kind"], _text(nt.get("intent"), "note.intent", MAX_FIELD_CHARS, repair, notes, required=False),
                     pinned, _count(nt.get("hit_count"), "note.hit_count"),
                     _count(nt.get("recall_count"), "note.recall_count"), nt.get("tier", "project"))
    if not namespace.startswith("skill/"):
        raise EntryError(f"a per-skill note needs a 'skill/<skill-id>' namespace, not {namespace!r}", "namespace")
    return note


def _structured(raw: Mapping[str, Any], mtype: str, repair: bool, notes: list[tuple[str, str]]) -> Structured | None:
    if raw.get("structured") is None:
        return None
    st = _mapping(raw["structured"], "structured")
    _unknown(st, {"key", "value", "confidence"}, "structured")
    structured = Structured(_text(st.get("key"), "structured.key", MAX_FIELD_CHARS, repair, notes),
                            _text(st.get("value"), "structured.value", MAX_FIELD_CHARS, repair, notes),
                            _number(st.get("confidence"), "structured.confidence", 0, 1, 1.0))
    if mtype != "semantic":
        raise EntryError("'structured' applies to semantic memories only", "structured")
    return structured


def _times(raw: Mapping[str, Any], default_time: str) -> tuple[str, str, str]:
    """Created, updated and last accessed: each defaults to the one before it (access: the later)."""
    created = parse_time(raw["created_at"], "created_at") if raw.get("created_at") is not None else default_time
    updated = parse_time(raw["updated_at"], "updated_at") if raw.get("updated_at") is not None else created
    accessed = (parse_time(raw["last_accessed_at"], "last_accessed_at") if raw.get("last_accessed_at") is not None
                else max(created, updated))
    return created, updated, accessed


def _entry_id(raw: Mapping[str, Any], namespace: str, content: str) -> str:
    rid = raw.get("id")
    if rid is None:
        return derived_id(namespace, content)
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip() or len(str(rid)) > 200 \
            or _CONTROL.search(str(rid)):
        raise EntryError(f"'id' must be a non-empty string of at most 200 characters, not {rid!r}", "id")
    return str(rid)


def _supersedes(raw: Mapping[str, Any]) -> tuple[str, ...]:
    supersedes = raw.get("supersedes")
    if isinstance(supersedes, (str, int)) and not isinstance(supersedes, bool):
        supersedes = [supersedes]
    # (an id holds no control character nor lone surrogate, so a reference to one cannot either)
    if supersedes is not None and (not isinstance(supersedes, list)
                                   or not all(isinstance(s, (str, int)) and not isinstance(s, bool)
                                              and not _CONTROL.search(str(s)) for s in supersedes)):
        raise EntryError("'supersedes' must be an id or a list of ids", "supersedes")
    return tuple(str(s) for s in supersedes or ())


def with_changes(entry: MemoryEntry, **changes: Any) -> MemoryEntry:
    return replace(entry, **changes)
