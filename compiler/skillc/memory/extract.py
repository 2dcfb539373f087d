"""Explicit memory commands, without an LLM (seed 000 §4.3.4).

A transcript is JSONL (``{"role": …, "content": …}`` per line; content may also be a list of
``{"type": "text", "text": …}`` parts) or plain text (lines ``user: …`` / ``assistant: …``; a text
without any role prefix is all the user's).  Only the user's messages are read, sentence by sentence:

* ``remember that …``, ``remember: …``, ``remember this: …``, ``/remember …``, ``note that …`` → the rest;
* ``always use …``, ``always …``, ``never …`` → the sentence itself (a preference);
* ``forget that …``, ``forget about …``, ``/forget …``, ``stop remembering …``, ``delete memory about …`` →
  a tombstone (``forget: true``): when frozen, older memories matching it go to ``pruned``.

Entries get importance 0.95 (an explicit user instruction), category ``preference`` for
always/never/prefer/use/don't sentences and ``fact`` otherwise, and provenance (transcript, line).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..jsonio import load_json
from .model import EntryError, MemoryEntry, entry_from_dict

IMPORTANCE = 0.95
_ROLE_LINE = re.compile(r"^\s*\[?(user|human|assistant|ai|system|tool)\]?\s*:\s?(.*)$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = r"^(?:(?:please|ok|okay|also|actually|and|oh|hey|btw)\b[,:]?\s+)*"
_REMEMBER = re.compile(_LEAD + r"(?:/remember\s+|remember(?:\s+that\s+|\s+this\s*:\s*|\s*:\s*)|"
                       r"note\s+that\s+)(?P<x>.+)$", re.IGNORECASE | re.DOTALL)
_FORGET = re.compile(_LEAD + r"(?:/forget\s+|forget\s+(?:that\s+|about\s+)?|stop\s+remembering\s+(?:that\s+)?|"
                     r"delete\s+(?:the\s+)?memory\s+(?:about\s+|of\s+)?)(?P<x>.+)$", re.IGNORECASE | re.DOTALL)
_RULE = re.compile(_LEAD + r"(?P<x>(?:always|never)\s+.+)$", re.IGNORECASE | re.DOTALL)
_PREFERENCE = re.compile(r"^(?:always|never|use|prefer|don't|do not|avoid)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    text: str
    line: int
    time: Any = None


def messages(text: str) -> Iterator[Message]:
    """Messages of a JSONL or plain-text transcript (``ValueError`` names a malformed JSONL line)."""
    lines = text.split("\n")
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if first.startswith("{"):
        for n, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                obj = load_json(raw)
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {n}: malformed JSON line: {exc.msg} (column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"line {n}: expected an object with 'role' and 'content'")  # noqa: TRY004
            content = obj.get("content")
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict)
                                    and isinstance(p.get("text"), str))
            if not isinstance(content, str):
                continue
            yield Message(str(obj.get("role", "user")).lower(), content, n,
                          obj.get("created_at") or obj.get("timestamp"))
        return
    has_roles = any(_ROLE_LINE.match(ln) for ln in lines)
    role, buf, start = "user", [], 1
    for n, raw in enumerate(lines, 1):
        m = _ROLE_LINE.match(raw) if has_roles else None
        if m:
            if buf:
                yield Message(role, "\n".join(buf), start)
            role, buf, start = m.group(1).lower(), [m.group(2)], n
        else:
            buf.append(raw)
    if buf:
        yield Message(role, "\n".join(buf), start)


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip().rstrip(".!?,;:").strip()
    return text[:1].upper() + text[1:] if text else text


def commands(msg: Message) -> Iterator[tuple[str, str]]:
    """("remember" | "forget", text) for each explicit command in one message."""
    for sentence in _SENTENCE.split(msg.text):
        s = sentence.strip().strip("\"'“”")
        if not s:
            continue
        m = _FORGET.match(s)
        if m:
            yield "forget", _clean(m.group("x"))
            continue
        m = _REMEMBER.match(s) or _RULE.match(s)
        if m:
            yield "remember", _clean(m.group("x"))


def extract(text: str, *, transcript: str, namespace: str, default_time: str,
            notes: list[str] | None = None) -> list[MemoryEntry]:
    """The entries a transcript asks for; ``notes`` receives what was changed to make them (a
    sentence capped at 8,000 characters, control characters removed): nothing is lost silently."""
    out: list[MemoryEntry] = []
    seen: set[str] = set()
    for msg in messages(text):
        if msg.role not in ("user", "human"):
            continue
        for action, content in commands(msg):
            if not content:
                continue
            raw: dict[str, Any] = {
                "type": "semantic", "content": content, "namespace": namespace, "importance": IMPORTANCE,
                "source": "extract", "provenance": {"transcript": transcript, "line": msg.line, "role": msg.role},
            }
            if msg.time is not None:
                raw["created_at"] = msg.time
            if action == "forget":
                raw["forget"] = True
            else:
                raw["category"] = "preference" if _PREFERENCE.match(content) else "fact"
            try:
                entry, repairs = entry_from_dict(raw, default_time=default_time, source="extract", repair=True)
            except EntryError:
                raw.pop("created_at", None)
                entry, repairs = entry_from_dict(raw, default_time=default_time, source="extract", repair=True)
            if notes is not None:
                notes.extend(f"line {msg.line}: {message}" for _, message in repairs.messages)
            if action == "forget":
                entry = replace(entry, id="forget-" + entry.id[2:])
            if entry.id in seen:
                continue
            seen.add(entry.id)
            out.append(entry)
    return out
