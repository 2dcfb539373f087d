"""Meerkat v2.0 renderers, byte-exact (research/frameworks.md §1.6-1.9).

* ``render_inventory``: the ``<available_skills>`` system-prompt block, flat up to ``threshold``
  skills and by collection above it.
* ``render_injection``: the ``<skill id=…>`` block a skill's body is injected as, with closing tags in
  the body escaped and the 32 KiB cap.
* ``browse_result`` / ``load_result``: the JSON results of the ``browse_skills`` / ``load_skill`` tools.
* ``parse_skill_ref``: the ``/collection/skill rest of message`` reference at the start of a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...model import SKILL_REF_ID
from ...resolve_types import DEFAULT_INVENTORY_THRESHOLD, DEFAULT_MAX_INJECTION_BYTES
from ._templates import render, xml_escape
from .adk import WHITE_SPACE

__all__ = [
    "DEFAULT_INVENTORY_THRESHOLD",
    "MAX_INJECTION_BYTES",
    "SkillRef",
    "browse_result",
    "load_result",
    "parse_skill_ref",
    "render_injection",
    "render_inventory",
    "tool_json",
    "top_level_collections",
    "xml_escape",
]

MAX_INJECTION_BYTES = DEFAULT_MAX_INJECTION_BYTES
TRUNCATION_MARKER = "[truncated]"

# Rust `regex` `\s` is Unicode White_Space; Python's `\s` also matches U+001C..U+001F.
_S = "[" + re.escape(WHITE_SPACE) + "]"
# Rust `regex` `(?i)</skill\s*>` folds case by Unicode *simple* case folding (CaseFolding.txt C and S):
# s ~ S ~ U+017F (long s), k ~ K ~ U+212A (Kelvin sign), i ~ I, l ~ L.  Python's re.IGNORECASE
# also matches U+0130 and U+0131 (Turkish dotted/dotless i) for i, which Meerkat leaves alone,
# so the classes are spelled out instead.
_CLOSING_TAG = re.compile(rf"</[sS\u017f][kK\u212a][iI][lL][lL]{_S}*>")
# agent/skills.rs: `^/([a-z0-9-]+(?:/[a-z0-9-]+)*)(?:\s+(.*))?$`; Rust's `$` is the end of the text,
# Python's also matches before a final newline, hence `\Z`.
_SKILL_REF = re.compile(rf"/({SKILL_REF_ID})(?:{_S}+(.*))?\Z")


class SkillLike(Protocol):
    id: str
    description: str


class NamedSkillLike(Protocol):
    id: str
    name: str
    description: str


class CollectionLike(Protocol):
    path: str
    description: str
    count: int


def top_level_collections(collections: Iterable[CollectionLike]) -> list[CollectionLike]:
    """The collections the inventory lists: top-level paths only, in byte order (Meerkat's BTreeMap)."""
    return sorted((c for c in collections if "/" not in c.path), key=lambda c: c.path.encode("utf-8"))


def render_inventory(skills: Sequence[SkillLike], collections: Iterable[CollectionLike],
                     threshold: int = DEFAULT_INVENTORY_THRESHOLD) -> str:
    """The inventory block: ``""`` without skills, flat when ``len(skills) <= threshold``, else collections.

    ``skills`` are rendered in the order given; in collections mode only top-level collections
    appear (root-level skills are then invisible, as in Meerkat).  No trailing newline.
    """
    if not skills:
        return ""
    if len(skills) <= threshold:
        return render("meerkat_inventory_flat.xml.j2", skills=skills)
    return render("meerkat_inventory_collections.xml.j2", collections=top_level_collections(collections))


def render_injection(id: str, body: str, max_bytes: int = MAX_INJECTION_BYTES) -> str:
    """``<skill id="…">\\n{body}\\n</skill>``, ``</skill>`` in the body escaped as ``<\\/skill>``.

    Above ``max_bytes`` UTF-8 bytes the block is cut at the last character boundary at or before
    ``max_bytes - 11`` and ``[truncated]`` appended (the closing tag is lost), as Meerkat does.
    """
    escaped = _CLOSING_TAG.sub(lambda _m: "<\\/skill>", body)
    content = f'<skill id="{xml_escape(id)}">\n{escaped}\n</skill>'
    raw = content.encode("utf-8")
    if len(raw) <= max_bytes:
        return content
    end = max(max_bytes - len(TRUNCATION_MARKER), 0)
    while end > 0 and (raw[end] & 0xC0) == 0x80:  # a continuation byte: not a character boundary
        end -= 1
    return raw[:end].decode("utf-8") + TRUNCATION_MARKER


@dataclass(frozen=True, slots=True)
class SkillRef:
    id: str
    rest: str  # the message after the reference ("" when absent)


def parse_skill_ref(message: str) -> SkillRef | None:
    """``/a/b rest`` at the very start of a message; ``None`` when the text after it spans two lines."""
    m = _SKILL_REF.match(message)
    if m is None:
        return None
    return SkillRef(m.group(1), m.group(2) or "")


def _dump(value: object) -> str:
    # serde_json (`json!` builds a BTreeMap-backed Map): keys sorted, compact, non-ASCII as is.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_json(value: object) -> str:
    """A tool result as Meerkat serialises it (serde_json: keys sorted, compact, non-ASCII as is)."""
    return _dump(value)


def _entry(skill: NamedSkillLike) -> dict[str, str]:
    return {"id": skill.id, "name": skill.name, "description": skill.description}


def _collection_of(skill_id: str) -> str:
    return skill_id.rsplit("/", 1)[0] if "/" in skill_id else ""


def _immediate_child(path: str, parent: str) -> bool:
    if not parent:
        return "/" not in path
    return path.startswith(parent + "/") and "/" not in path[len(parent) + 1 :]


def browse_data(skills: Sequence[NamedSkillLike], collections: Iterable[CollectionLike],
                path: str | None = None, query: str | None = None) -> dict:
    """What ``browse_skills`` answers (before serialisation).

    With a query (which wins over the path): every skill whose name or description contains it,
    case-insensitively.  Else a listing of ``path`` (root when omitted): the skills directly in it
    and its immediate subcollections.  An unknown path lists nothing (not an error).
    """
    if query is not None:
        q = query.lower()
        hits = [s for s in skills if q in s.name.lower() or q in s.description.lower()]
        return {"type": "search", "query": query, "skills": [_entry(s) for s in hits]}
    p = path or ""
    subs = [{"path": c.path, "description": c.description, "count": c.count}
            for c in collections if _immediate_child(c.path, p)]
    direct = [_entry(s) for s in skills if _collection_of(s.id) == p]
    return {"type": "listing", "path": p, "subcollections": subs, "skills": direct}


def browse_result(skills: Sequence[NamedSkillLike], collections: Iterable[CollectionLike],
                  path: str | None = None, query: str | None = None) -> str:
    """The ``browse_skills`` tool result text (compact JSON, keys sorted as serde_json writes them)."""
    return _dump(browse_data(skills, collections, path, query))


def load_data(id: str, name: str, body: str, max_bytes: int = MAX_INJECTION_BYTES) -> dict:
    rendered = render_injection(id, body, max_bytes)
    return {"id": id, "name": name, "body": rendered, "byte_size": len(rendered.encode("utf-8"))}


def load_result(id: str, name: str, body: str, max_bytes: int = MAX_INJECTION_BYTES) -> str:
    """The ``load_skill`` tool result: ``{"body": <skill> block, "byte_size", "id", "name"}``."""
    return _dump(load_data(id, name, body, max_bytes))
