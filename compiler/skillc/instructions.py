"""Lightweight skill files (``.skills/*.md``, seed 000 format B) and convention files (``CLAUDE.md``,
``AGENTS.md``…, format C) published as skills, with the ID, name and description seed 000's parser
gives them (adk-rust's ``parser.rs`` and ``index.rs``: research/frameworks.md §2.2).

* name: the frontmatter's ``name``; a convention file without frontmatter is named after its file
  (``CLAUDE.md`` → ``claude``, ``AGENTS.md`` and ``AGENT.md`` → ``agents``…);
* description: the frontmatter's; for a convention file without one, its first non-empty line (a
  heading's text, else the line's first 120 characters), else ``Instructions loaded from NAME``;
* ID: ``normalize_id(name) + "-" + `` the first 12 hex digits of the SHA-256 of the file's raw
  bytes (so, as in adk-rust, an edited file has a new ID).

A published skill needs a SKILL.md with ``name`` and ``description``: a file that has them is
published as it is; a convention file without them gets that frontmatter put in front of its
unchanged text (``skill_md``).  Pure functions; ``sources.filesystem`` calls them.
"""

from __future__ import annotations

import hashlib
import json

from .model import Document, ItemKind

CONVENTION_NAMES = {"AGENTS.MD": "agents", "AGENT.MD": "agents", "CLAUDE.MD": "claude", "GEMINI.MD": "gemini",
                    "COPILOT.MD": "copilot", "SKILLS.MD": "skills", "SOUL.MD": "soul"}
DESCRIPTION_CHARS = 120


def normalize_id(name: str) -> str:
    """adk-rust's ``normalize_id``: ASCII letters and digits lower-cased, space ``-`` ``_`` as ``-``
    (not collapsed), other letters and digits kept, everything else dropped; ``skill`` if empty."""
    out = []
    for ch in name:
        if ch.isascii() and ch.isalnum():
            out.append(ch.lower())
        elif ch in " -_":
            out.append("-")
        elif not ch.isascii() and ch.isalnum():
            out.append(ch)
    return "".join(out) or "skill"


def instruction_id(name: str, raw: bytes) -> str:
    return f"{normalize_id(name)}-{hashlib.sha256(raw).hexdigest()[:12]}"


def _meta_text(doc: Document, key: str) -> str:
    value = doc.meta.get(key)
    return value.strip() if isinstance(value, str) else ""


def _strict(doc: Document) -> bool:
    """Whether adk-rust's strict parse takes the file: a frontmatter with a name and a description."""
    return bool(_meta_text(doc, "name") and _meta_text(doc, "description"))


def instruction_name(doc: Document, file_name: str) -> str:
    """The skill's name ("" for a lightweight file adk-rust skips: no name or description)."""
    if _strict(doc):
        return _meta_text(doc, "name")
    if doc.kind is not ItemKind.CONVENTION:
        return ""
    return CONVENTION_NAMES.get(file_name.upper(), normalize_id(file_name.rsplit(".", 1)[0]))


def instruction_description(doc: Document, file_name: str) -> str:
    if _strict(doc) or doc.kind is not ItemKind.CONVENTION:
        return _meta_text(doc, "description")
    for line in doc.text.replace("\r\n", "\n").split("\n"):
        line = line.strip()
        if not line:
            continue
        heading = line.lstrip("#").strip() if line.startswith("#") else ""
        return heading or line[:DESCRIPTION_CHARS]
    return f"Instructions loaded from {file_name}"


def skill_md(doc: Document, raw: bytes, name: str, description: str) -> bytes:
    """The SKILL.md published for the file: its own bytes when its frontmatter names and describes
    it, else a frontmatter with both (JSON strings are valid YAML scalars, whatever they hold) in
    front of the unchanged text."""
    if _strict(doc):
        return raw
    head = f"---\nname: {json.dumps(name, ensure_ascii=False)}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n"
    return head.encode("utf-8") + raw


__all__ = ["CONVENTION_NAMES", "instruction_description", "instruction_id", "instruction_name", "normalize_id",
           "skill_md"]
