"""Tokens and TF-IDF vectors (sparse, pure Python): the "embedding" of seed 000's relevance score.

Tokens are lower-cased runs of letters and digits (Unicode-aware).  A vector weighs a term by
``(1 + ln tf) · idf`` with the smoothed ``idf = ln((1 + N) / (1 + df)) + 1`` and is L2-normalised,
so the cosine of two vectors is their dot product.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_TOKEN = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so", "that", "the", "their", "them", "then", "there", "these", "this", "to", "was", "we", "were", "what", "when", "which", "who", "will", "with", "you", "your", "do", "does", "did", "not", "no", "about", "into", "than", "too", "very", "can", "just", "also"]
)

Vector = dict[str, float]


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def terms(text: str) -> list[str]:
    """Tokens without stop words (what the keyword overlap compares)."""
    return [t for t in tokens(text) if t not in STOPWORDS]


class Idf:
    """Document frequencies of a corpus; turns token lists into normalised TF-IDF vectors."""

    __slots__ = ("_cache", "df", "n")

    def __init__(self, docs: Iterable[Sequence[str]]) -> None:
        df: Counter[str] = Counter()
        n = 0
        for toks in docs:
            n += 1
            df.update(set(toks))
        self.n = n
        self.df = df
        self._cache: dict[str, float] = {}

    def idf(self, term: str) -> float:
        value = self._cache.get(term)
        if value is None:
            value = math.log((1 + self.n) / (1 + self.df.get(term, 0))) + 1.0
            self._cache[term] = value
        return value

    def vector(self, toks: Sequence[str], known_only: bool = False) -> Vector:
        counts = Counter(toks)
        vec: Vector = {}
        for term, tf in counts.items():
            if known_only and term not in self.df:
                continue
            vec[term] = (1.0 + math.log(tf)) * self.idf(term)
        norm = math.sqrt(sum(w * w for w in vec.values()))
        if norm == 0:
            return {}
        return {t: w / norm for t, w in vec.items()}


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


def prefix_terms(vec: Mapping[str, float], threshold: float, rank: Mapping[str, Any]) -> list[str]:
    """The first terms of ``vec`` in one order shared by every vector (``rank``: term → sort key),
    until the rest weighs less than ``threshold`` (L2).

    Two unit vectors with cosine ≥ threshold share a term of both prefixes: if every shared term is
    past one vector's prefix, the dot product is at most that rest's norm (Cauchy–Schwarz), below
    the threshold.  So an index of the prefixes alone, probed with a prefix, finds every
    near-duplicate (AllPairs' prefix filter), and with rare terms first the prefixes are short
    and their postings too.
    """
    rest = sum(w * w for w in vec.values())
    out: list[str] = []
    limit = threshold * threshold
    for term in sorted(vec, key=rank.__getitem__):
        if rest < limit:
            break
        out.append(term)
        rest -= vec[term] * vec[term]
    return out
