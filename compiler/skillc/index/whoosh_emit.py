"""``--emit whoosh``: a whoosh index (``whoosh-reloaded``, the ``whoosh`` extra) from skillc's tokens.

Each field holds the adk-rust tokens joined by spaces and is analysed with whoosh's
``SpaceSeparatedTokenizer`` only, so whoosh sees exactly the tokens the bundle's own index has.
Query it with the same tokenization: ``" ".join(skillc.index.tokenize.tokenize(text))``.
Field boosts mirror the bundle index's weights (name 4, description 2, tags 2, body 1).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from ..errors import SkillcError
from .bm25 import FIELD_WEIGHTS, DocTokens, IndexDoc


def schema():
    from whoosh.analysis import SpaceSeparatedTokenizer
    from whoosh.fields import ID, STORED, TEXT, Schema

    analyzer = SpaceSeparatedTokenizer()
    return Schema(id=ID(stored=True, unique=True), title=STORED,
                  **{f: TEXT(analyzer=analyzer, field_boost=float(w)) for f, w in FIELD_WEIGHTS.items()})


def write_whoosh(directory: Path, docs: Sequence[IndexDoc], tokens: Sequence[DocTokens]) -> None:
    try:
        from whoosh.filedb.filestore import FileStorage
    except ImportError:
        raise SkillcError("--emit whoosh needs whoosh-reloaded", hint="pip install 'skillc[whoosh]'") from None

    class _FixedTimeStorage(FileStorage):
        def file_modified(self, name):  # compound segment files record their parts' mtimes
            return 0.0
    directory.mkdir(parents=True, exist_ok=True)
    state = random.getstate()
    random.seed(0)  # whoosh names segments with the global `random`: fixed names, deterministic bytes
    try:
        ix = _FixedTimeStorage(str(directory)).create_index(schema())
        writer = ix.writer(limitmb=256)
        for doc, tok in zip(docs, tokens):
            writer.add_document(id=doc.id, title=doc.name, name=" ".join(tok.name),
                                description=" ".join(tok.description), tags=" ".join(tok.tags),
                                body=" ".join(tok.body))
        writer.commit()
    finally:
        random.setstate(state)
