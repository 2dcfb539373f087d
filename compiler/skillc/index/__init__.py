"""Search indexes of a bundle: the adk-rust tokenizer and scorer, the portable BM25 index.

``tokenize`` (pure), ``adk`` (adk-rust's lexical scorer), ``bm25`` (build the index files),
``reader`` (read them with the standard library, numpy when present), ``emit`` (the build emitter).
"""

from __future__ import annotations

from ..errors import SkillcError


class BundleError(SkillcError):
    """A bundle (or one of its files) is missing, corrupted, too new, or not a bundle at all."""

    exit_code = 1
