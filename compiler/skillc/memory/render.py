"""Rendered memory: seed 000 §4.3.5's prompt section and seed 003's ``<skill-memory>`` blocks.

Templates: ``templates/memory/prompt.md.j2``, ``skill_memory_note.xml.j2``, ``skill_memory_block.md.j2``.

* ``prompt_section``: active semantic memories of the ``global`` and ``project/*`` namespaces, best
  first (effective importance, then most recently used, then id), at least
  ``minImportanceForRetrieval``, at most ``maxMemoriesInPrompt`` and ``promptBudgetChars`` (2,000)
  characters in all; an entry that does not fit is skipped and the next one tried.  Badges
  ``[PREF] [CONV] [PATN] [WARN] [FACT]`` (no category: ``[FACT]``).
* ``skill_block``: the notes of ``skill/<id>`` (or ``skill/<name>``) for a skill whose frontmatter
  has ``skill-memory: {enabled: true}``.  At build time there is no intent, so the order is seed
  003's "no-intent" rung (``getSkillMemoryNotes``): pinned first, then ``recency_norm + hit_norm``
  unweighted (the ``ranking_*`` weights belong to the rung with an intent), then the newest; at most
  50 candidates; budget fill as in seed 003 (``budgetFill``: token estimate ``ceil(len/4)`` of the
  note's delta, in UTF-16 code units as JavaScript counts; a pinned note is skipped when the pinned
  total would pass ``max_pinned_tokens``, any note when the total would pass ``max_tokens``).  With an
  intent (``MemoryIndex.skill_block``) the pinned notes come first, most recently used first, then
  the others by ``ranking_relevance · relevance + ranking_recency · recency_norm + ranking_hit ·
  hit_norm``, the relevance being the TF-IDF cosine of the intent with the note's intent and delta
  (mode ``full``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2

from ..discover.walk import path_key
from ..resources import template_dir, template_environment
from .model import BADGES, epoch

NO_INTENT_LIMIT = 50


def _xattr(value: Any) -> str:
    return (str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;"))


@cache
def _env() -> jinja2.Environment:
    env = template_environment(template_dir() / "memory", keep_trailing_newline=True)
    env.filters["xattr"] = _xattr
    return env


def template(name: str) -> jinja2.Template:
    return _env().get_template(name)


# ---------------------------------------------------------------- prompt.md

def prompt_candidates(entries: Iterable[Mapping[str, Any]], min_importance: float,
                      included_types: Sequence[str]) -> list[Mapping[str, Any]]:
    """Snapshot entries (JSON form) eligible for the prompt, best first."""
    out = [e for e in entries
           if e["status"] == "active" and e["type"] == "semantic" and "semantic" in included_types
           and (e["namespace"] == "global" or e["namespace"].startswith("project/"))
           and e["effective_importance"] >= min_importance]
    out.sort(key=lambda e: (-e["effective_importance"], tuple(-ord(c) for c in e["last_accessed_at"]),
                            path_key(e["id"])))
    return out


def prompt_section(entries: Iterable[Mapping[str, Any]], *, budget: int = 2000, max_items: int = 10,
                   min_importance: float = 0.3, included_types: Sequence[str] = ("semantic",)) -> str:
    tpl = template("prompt.md.j2")
    chosen: list[dict[str, str]] = []
    for e in prompt_candidates(entries, min_importance, included_types):
        if len(chosen) >= max_items:
            break
        # the seed's format!("- {} {}\n", badge, memory.content): the content as stored, line breaks
        # and runs of spaces included, so prompt.md is the app's text byte for byte
        item = {"badge": BADGES.get(e.get("category") or "fact", "[FACT]"), "content": e["content"]}
        if len(tpl.render(memories=[*chosen, item])) <= budget:
            chosen.append(item)
    return tpl.render(memories=chosen) if chosen else ""


# ---------------------------------------------------------------- <skill-memory>

@dataclass(frozen=True, slots=True)
class SkillMemoryConfig:
    """Seed 003's frontmatter (research/frameworks.md §4.1); weights already normalised."""

    max_tokens: int = 1500
    max_pinned_tokens: int = 4000
    dedup_threshold: float = 0.92
    ranking_relevance: float = 0.6
    ranking_recency: float = 0.25
    ranking_hit: float = 0.15


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value.split("#", 1)[0].strip().strip("'\""))
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def skill_memory_config(meta: Mapping[str, Any]) -> SkillMemoryConfig | None:
    """``None`` unless the frontmatter has ``skill-memory`` with ``enabled: true`` (or ``"true"``)."""
    raw = meta.get("skill-memory")
    if not isinstance(raw, Mapping):
        return None
    enabled = raw.get("enabled")
    if not (enabled is True or (isinstance(enabled, str) and enabled.strip().strip("'\"") == "true")):
        return None
    d = SkillMemoryConfig()
    vals: dict[str, Any] = {}
    for key in ("max_tokens", "max_pinned_tokens"):
        n = _num(raw.get(key))
        vals[key] = int(n) if n is not None and n >= 0 else getattr(d, key)
    n = _num(raw.get("dedup_threshold"))
    vals["dedup_threshold"] = n if n is not None else d.dedup_threshold
    weights = [_num(raw.get(k)) for k in ("ranking_relevance", "ranking_recency", "ranking_hit")]
    w = [x if x is not None and x >= 0 else dflt for x, dflt in
         zip(weights, (d.ranking_relevance, d.ranking_recency, d.ranking_hit))]
    total = sum(w)
    if total <= 0:
        w, total = [d.ranking_relevance, d.ranking_recency, d.ranking_hit], 1.0
    vals.update(ranking_relevance=w[0] / total, ranking_recency=w[1] / total, ranking_hit=w[2] / total)
    return SkillMemoryConfig(**vals)


def _ts(e: Mapping[str, Any]) -> float:
    return epoch(e["last_accessed_at"] or e["created_at"])


def rank_notes(notes: Sequence[Mapping[str, Any]], cfg: SkillMemoryConfig,
               relevance: Mapping[str, float] | None = None) -> list[Mapping[str, Any]]:
    """Seed 003 ordering.  ``relevance`` (note id → similarity) switches to the "full" rung."""
    if not notes:
        return []
    stamps = [_ts(n) for n in notes]
    lo, hi = min(stamps), max(stamps)
    hits = [n["note"]["hit_count"] for n in notes]
    top = max(hits)
    scored = []
    for n, ts, h in zip(notes, stamps, hits):
        rec = (ts - lo) / (hi - lo) if hi > lo else 0.0
        hit = h / top if top else 0.0
        pinned = bool(n["note"]["pinned"])
        if relevance is None:
            # The no-intent SQL orders by the plain sum: its weights are the intent rung's only.
            key = (not pinned, -(rec + hit), -epoch(n["created_at"]), path_key(n["id"]))
        elif pinned:
            # getPinnedNotes: pinned notes lead the intent rung, most recently used first, unscored.
            key = (False, -ts, 0.0, path_key(n["id"]))
        else:
            score = (cfg.ranking_relevance * max(0.0, relevance.get(n["id"], 0.0)) + cfg.ranking_recency * rec
                     + cfg.ranking_hit * hit)
            # (a stable sort of candidates fetched most recently used first: ties keep that order)
            key = (True, -score, -ts, path_key(n["id"]))
        scored.append((key, n))
    scored.sort(key=lambda t: t[0])
    ranked = [t[1] for t in scored]
    return ranked if relevance is not None else ranked[:NO_INTENT_LIMIT]


def note_tokens(delta: str) -> int:
    """Seed 003's ``estimateTokens(note.delta)``: ``Math.ceil(text.length / 4)``, where a JavaScript
    length counts UTF-16 code units (a character beyond the BMP, such as an emoji, counts 2)."""
    return math.ceil(len(delta.encode("utf-16-le", "surrogatepass")) // 2 / 4)


def _note_xml(n: Mapping[str, Any]) -> str:
    note = n["note"]
    return template("skill_memory_note.xml.j2").render(
        kind=note["kind"], intent=note.get("intent", ""), hit_count=note["hit_count"],
        pinned="true" if note["pinned"] else "false", delta=n["content"])


def skill_block(skill_id: str, notes: Sequence[Mapping[str, Any]], cfg: SkillMemoryConfig, *,
                mode: str = "no-intent", relevance: Mapping[str, float] | None = None) -> str:
    """The ``<skill-memory>`` block, or ``""`` when no note fits (seed 003: no stub)."""
    total = pinned_total = 0
    chosen: list[str] = []
    n_pinned = 0
    for n in rank_notes(notes, cfg, relevance):
        cost = note_tokens(n["content"])  # the delta alone, not the note's XML
        is_pinned = bool(n["note"]["pinned"])
        if is_pinned:
            if pinned_total + cost > cfg.max_pinned_tokens:
                continue
            # budgetFill charges the pinned budget before the total check, even for a note that
            # the total then turns away: later pinned notes see that much less room.
            pinned_total += cost
        if total + cost > cfg.max_tokens:
            continue
        total += cost
        n_pinned += is_pinned
        chosen.append(_note_xml(n))
    if not chosen:
        return ""
    return template("skill_memory_block.md.j2").render(skill=skill_id, mode=mode, count=len(chosen),
                                                       pinned=n_pinned, notes=chosen)
