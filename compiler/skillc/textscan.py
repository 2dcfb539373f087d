"""Substring tests for the per-file hot path.

CPython (3.11, 3.12) finds a needle of one character with ``memchr``, but compares a longer one
character by character: ``"](" in body`` takes ~3 µs on a 4 KB body, ``"]" in body`` 0.1 µs.  A
lint asks a dozen such questions of every file ("any links?", "any HTML comment?", "any merge
conflict marker?"), and the answer is nearly always no: finding the needle's first, rare character
first turns each into a ``memchr``.
"""

from __future__ import annotations

import re

_PROBES = 8  # occurrences of the first character tried one by one before the plain search


def contains(text: str, needle: str) -> bool:
    """``needle in text`` (``needle`` not empty), fast when its first character is rare in ``text``.

    Choose the needle's spelling so that its first character is the rare one (``"]("``, ``"<!--"``).
    Where that character is common, after a few occurrences the rest is searched in one plain pass:
    never much slower than ``in``.
    """
    first = needle[0]
    i = text.find(first)
    for _ in range(_PROBES):
        if i < 0:
            return False
        if text.startswith(needle, i):
            return True
        i = text.find(first, i + 1)
    return i >= 0 and text.find(needle, i) >= 0


class LazyPattern:
    """A regular expression compiled on first use (``search``, ``finditer``… are the compiled
    pattern's).  Compiling a large pattern costs milliseconds, paid at import by every command
    and by ``skillc lint`` before its workers start, for patterns most runs never use: the secret
    formats run only on the rare texts where one of their trigger words occurs.  Once compiled, the
    pattern's methods are this object's own attributes: a scan that tries a format at thousands of
    places pays no lookup through ``__getattr__``."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = compiled = re.compile(self.pattern, self.flags)
            for name in ("match", "search", "fullmatch", "finditer", "findall", "sub", "split"):
                setattr(self, name, getattr(compiled, name))
        return self._compiled

    def __getattr__(self, name: str):  # (only until compiled, and for the rarer attributes)
        return getattr(self.compiled(), name)
