"""adk-rust's lexical skill scorer, exactly (``adk-skill/src/select.rs``; research/frameworks.md §2.3).

Per query token (duplicates count again): +4.0 if it is a name token, +2.5 a description token,
+2.0 a tag token, +1.0 a body token; the sum is divided by ``max(sqrt(max(|B|, 1)), 1)`` where
``|B|`` is the number of *unique* body tokens.  Everything is f32, as in Rust: the sums are exact
(multiples of 0.5), and rounding the double-precision quotient and square root of f32 inputs to f32
gives Rust's correctly rounded f32 results.  ``min_score`` is inclusive (compared in f32); ties go
by name, then path (component-wise, like Rust's ``PathBuf``).  Tags filter as whole lower-cased tags.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .tokenize import token_set, tokenize

__all__ = ["FIELD_WEIGHTS", "AdkCandidate", "AdkMatch", "SelectionPolicy", "f32", "normalise", "rank",
           "raw_score", "score_text"]

# name, description, tags, body: the per-token increments, in the order Rust adds them
FIELD_WEIGHTS = (4.0, 2.5, 2.0, 1.0)
_F32 = struct.Struct("<f")


def f32(value: float) -> float:
    """Round a Python float to the nearest f32 (ties to even), as a Python float; beyond f32's range
    it is infinite, as Rust's ``as f32`` and ``str::parse::<f32>`` give (``min_score`` 1e39 selects
    nothing)."""
    try:
        # (an int goes through float() first: struct refuses an int past f32's range with
        # struct.error, and one past a double's as "not a float", where Rust's value is infinite)
        value = float(value)
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:  # (struct refuses exactly the finite values that round to infinity)
        return math.inf if value > 0 else -math.inf


@dataclass(frozen=True, slots=True)
class SelectionPolicy:
    """adk-rust's ``SelectionPolicy`` defaults: top 1, ``min_score`` 1.0, no tag filters."""

    top_k: int = 1
    min_score: float = 1.0
    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AdkCandidate:
    """What ranking needs about one skill besides its score (no body)."""

    name: str
    path: str  # the skill ID ("/"-joined); compared component-wise
    tags: tuple[str, ...]  # as written; compared lower-cased (ASCII), whole


@dataclass(frozen=True, slots=True)
class AdkMatch:
    score: float  # an f32 value
    index: int  # position of the candidate in the sequence given to ``rank``
    name: str
    path: str


def raw_score(query_tokens: Iterable[str], name: set[str], description: set[str], tags: set[str],
              body: set[str]) -> float:
    score = 0.0
    for token in query_tokens:
        if token in name:
            score += 4.0
        if token in description:
            score += 2.5
        if token in tags:
            score += 2.0
        if token in body:
            score += 1.0
    return score


def normalise(raw: float, body_unique: int) -> float:
    """``raw / max(sqrt(max(|B|,1) as f32), 1.0)`` in f32."""
    norm = f32(math.sqrt(f32(float(max(body_unique, 1)))))
    return f32(f32(raw) / max(norm, 1.0))


def score_text(query: str, name: str, description: str, tags: Sequence[str], body: str) -> float:
    """Score one skill from its text (the reference the bundle's precomputed sets must agree with)."""
    body_set = token_set(body)
    tag_set = {t for tag in tags for t in tokenize(tag)}
    raw = raw_score(tokenize(query), token_set(name), token_set(description), tag_set, body_set)
    return normalise(raw, len(body_set))


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def rank(candidates: Sequence[AdkCandidate], scores: Mapping[int, float], query_tokens: Sequence[str],
         policy: SelectionPolicy = SelectionPolicy()) -> list[AdkMatch]:
    """``select_skills``: filter by tags, keep ``score >= min_score``, sort, take ``top_k``.

    ``scores`` maps a candidate's index to its f32 score; absent candidates score 0.0 (they still pass
    a ``min_score`` of 0 or below, as in Rust).
    """
    if policy.top_k <= 0:
        return []
    include = {_ascii_lower(t) for t in policy.include_tags}
    exclude = {_ascii_lower(t) for t in policy.exclude_tags}
    if not query_tokens and not include:
        return []
    threshold = f32(policy.min_score)
    kept: list[AdkMatch] = []
    for i, cand in enumerate(candidates):
        if include or exclude:
            tags = {_ascii_lower(t) for t in cand.tags}
            if exclude and not tags.isdisjoint(exclude):
                continue
            if include and tags.isdisjoint(include):
                continue
        score = scores.get(i, 0.0)
        if score >= threshold:
            kept.append(AdkMatch(score, i, cand.name, cand.path))
    kept.sort(key=lambda m: (-m.score, m.name, tuple(m.path.split("/"))))
    return kept[: policy.top_k]
