"""The build emitter of ``api/index/``: BM25 index, selection data, the JS reader, optional whoosh.

Registered in ``skillc.emit.EMITTERS``.  Writes only below ``ctx.out/api/index/``:

* ``search.json``, ``terms.bin``, ``postings-NNN.bin``, ``docs-NNN.json``, ``tags.json`` (``bm25.py``);
* ``select.json``: what ``skillc select`` needs besides the index — per-skill priority and source,
  Plan Cascade's detection rules mapped to skill IDs, and its settings;
* ``skillc-index.js``: the dependency-free reader for browsers and node;
* ``whoosh/`` with ``--emit whoosh`` (``ctx.options.emit``), from the same tokens.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from ..errors import writing
from ..layout import SELECT_VERSION
from ..resolve_types import EmitContext, SourceSkill
from ..resources import template_dir
from .bm25 import (
    DOC_CHUNK,
    SHARD_BYTES,
    VERSION,
    DocTerms,
    IndexDoc,
    Postings,
    analyze,
    build,
    changed_terms,
    dump_json,
    previous_shards,
    update_postings,
)
from .select import DEFAULT_MAX_SKILLS_PER_STORY, DetectRule

INDEX_DIR = "api/index"
SELECT_FILE = "select.json"
JS_READER = "skillc-index.js"
SELECT_FORMAT = "skillc-select"


def skill_tags(skill: SourceSkill) -> tuple[str, ...]:
    """Frontmatter ``tags`` (a list, or a comma-separated string), else ``metadata.tags``."""
    meta = skill.document.meta
    value = meta.get("tags")
    if value is None and isinstance(meta.get("metadata"), Mapping):
        value = meta["metadata"].get("tags")
    if isinstance(value, str):
        return tuple(t.strip() for t in value.split(",") if t.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(t).strip() for t in value if t is not None and str(t).strip())
    return ()


def index_docs(skills: Iterable[SourceSkill]) -> list[IndexDoc]:
    return [IndexDoc(s.id, s.name, s.description, skill_tags(s), s.document.body) for s in skills]


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def external_config(ctx: EmitContext) -> Mapping:
    """Plan Cascade's parsed ``external-skills.json`` (``BuildConfig.external``) as a mapping."""
    value = ctx.options.external or ctx.resolution.settings.get("external")
    return _plain(value) or {}


def detect_rules(external: Mapping, published: Mapping[str, str]) -> list[DetectRule]:
    """The detection rules of the skills the bundle publishes.  ``published``: each ID's repository.
    A rule whose skill lost to another repository's copy of the ID (a user skill shadowing a
    vendor's) is dropped: it names a skill the bundle does not hold, and would fill a second slot
    with the winner's text under the loser's source."""
    rules = []
    for entry in external.get("skills", ()) or ():
        entry = _plain(entry)
        if entry.get("id") not in published:
            continue  # not in the bundle: nothing to inject
        if entry.get("repository") not in (None, published[entry["id"]]):
            continue  # shadowed
        rules.append(DetectRule(
            name=str(entry["name"]), id=str(entry["id"]), source=str(entry.get("source", "")),
            source_type=str(entry.get("source_type", "")), priority=int(entry.get("priority", 0)),
            files=tuple(entry.get("detect_files", entry.get("files", ())) or ()),
            patterns=tuple(entry.get("detect_patterns", entry.get("patterns", ())) or ()),
            inject_into=tuple(entry.get("inject_into", ("implementation",)) or ())))
    return rules


def select_data(ctx: EmitContext) -> dict:
    skills = ctx.resolution.skills
    external = external_config(ctx)
    ext_settings = dict(external.get("settings", {}) or {})
    settings = {
        "max_skills_per_story": int(ext_settings.get("max_skills_per_story", DEFAULT_MAX_SKILLS_PER_STORY)),
        "max_content_lines": int(ext_settings.get("max_content_lines", 200)),
        "inventory_threshold": int(ctx.resolution.settings.get("inventory_threshold", 12)),
        "max_injection_bytes": int(ctx.resolution.settings.get("max_injection_bytes", 32768)),
    }
    return {
        "format": SELECT_FORMAT,
        "version": SELECT_VERSION,
        "settings": settings,
        "priority": [s.repository.priority for s in skills],
        "source": [s.repository.name for s in skills],
        "source_type": [s.repository.tier.value for s in skills],
        "rules": [r.to_json() for r in detect_rules(external, {s.id: s.repository.name for s in skills})],
    }


def _emits(ctx: EmitContext) -> tuple[str, ...]:
    value = ctx.options.emit
    return (value,) if isinstance(value, str) else tuple(value)


def _built_files(ctx: EmitContext, docs: list[IndexDoc]) -> dict[str, bytes]:
    """The index files, through the build cache (``ctx.options.cache``) when there is one: each
    document's analysis is kept by its SKILL.md hash and fields, the whole index by all of those and
    the IDs, and the inverted postings by the IDs.  A rebuild tokenizes only the changed skills
    (nothing when none changed) and, when the skills are the same ones, updates the previous
    postings for the changed skills instead of inverting all of them again."""
    cache = ctx.options.cache
    if cache is None:
        return build(docs).files
    from ..cache import key_of

    keys = [key_of(ANALYSIS, s.document.sha256, len(d.body), d.name, d.description, d.tags)
            for s, d in zip(ctx.resolution.skills, docs)]
    ids = [d.id for d in docs]
    whole = key_of("index-files", VERSION, SHARD_BYTES, DOC_CHUNK, keys, ids)  # (a new layout: a new key)
    postings_key = key_of(POSTINGS, ids)
    files = cache.get(WHOLE_TABLE, whole)
    previous = postings_in(cache.get(WHOLE_TABLE, postings_key))  # (analysis keys, postings, files key); kept for the next build
    if files is not None:
        for key in keys:  # kept for the next build, which may change one skill
            cache.get("index", key)
        return files
    records = []
    for key, doc in zip(keys, docs):  # (in one process: sending 10,000 analyses back from workers costs more)
        rec = cache.get("index", key)
        if rec is None:
            rec = _analysis_record(analyze(doc))
            cache.put("index", key, rec)
        records.append(rec)
    updated = _updated_postings(cache, previous, keys, records)
    postings = updated[0] if updated is not None else None
    # (the terms of every document are needed only to invert them all; updated postings need their lengths)
    analyzed = [_analysis(r) if postings is None else ((), (), (), r[0], r[1]) for r in records]
    reuse = _reusable_shards(cache, previous, updated[1]) if updated is not None else None
    built = build(docs, analyzed=analyzed, postings=postings, reuse=reuse)
    cache.put(WHOLE_TABLE, whole, built.files)
    cache.put(WHOLE_TABLE, postings_key, postings_out(keys, built.postings, whole))
    return built.files


# The key prefix of the postings record (``postings_out``).  A record of another shape (the older
# layouts: arrays pickled one by one, or without the key of the files built from them) is never
# read as one: the prefix changes with the shape.
POSTINGS = "index-postings-3"


def _reusable_shards(cache, previous, touched: frozenset[str]) -> dict | None:
    """The previous build's postings shards whose terms no changed document touched (their bytes are
    those it wrote: ``bm25.previous_shards``), or None when its files are not in the cache."""
    files = cache.get(WHOLE_TABLE, previous[2])
    if not isinstance(files, dict):
        return None
    return previous_shards(files, sorted(previous[1]), touched)


def postings_out(keys: list[str], postings: Postings, files_key: str = "") -> tuple:
    """The postings as a cache record: each of the three arrays of every term, concatenated into one
    byte string (pickling 30,000 arrays one by one took 80 ms at 10,000 skills, unpickling them 65 ms;
    three byte strings are copied), and ``files_key``, the key of the index files built from them."""
    terms = tuple(postings)
    rows = [postings[t] for t in terms]
    code = rows[0][0].typecode if rows else "H"
    counts = array("I", [len(row[0]) for row in rows])
    blobs = tuple(b"".join(row[i].tobytes() for row in rows) for i in range(3))
    return (tuple(keys), sys.byteorder, code, terms, counts, *blobs, files_key)


def postings_in(rec: Any) -> tuple[tuple[str, ...], Postings, str] | None:
    """``(analysis keys, postings, files key)`` from a ``postings_out`` record; None (the postings are
    inverted again) for none, one of another shape or byte order, or one whose lengths do not add up."""
    try:
        keys, order, code, terms, counts, docs, tfs, bits, files_key = rec
        if order != sys.byteorder or len(terms) != len(counts) or not isinstance(files_key, str):
            return None
        size, total = array(code).itemsize, sum(counts)
        if (len(docs), len(tfs), len(bits)) != (total * size, total * 2, total):
            return None
        docs_view, tfs_view = memoryview(docs), memoryview(tfs)
        postings: Postings = {}
        at = 0
        for term, n in zip(terms, counts):
            d, tf = array(code), array("H")
            d.frombytes(docs_view[at * size:(at + n) * size])
            tf.frombytes(tfs_view[at * 2:(at + n) * 2])
            postings[term] = (d, tf, array("B", bits[at:at + n]))
            at += n
        return keys, postings, files_key
    except (TypeError, ValueError):
        return None


# The whole index and the postings (megabytes each) are records of their own files, read only when
# asked for (skillc.cache.FILE_TABLES): a rebuild that changed a skill reads the previous whole index
# only for the bytes of the postings shards no change touched (``_reusable_shards``).
WHOLE_TABLE = "index-files"
CACHE_TABLES = ("index", WHOLE_TABLE)  # (no other emitter uses them: a forked index hands them back)


# An analysis record: (length, unique body terms, the pickled terms, frequencies and field bits).
# The terms stay pickled until a build needs them (the skills that changed; every one when the
# postings are inverted again), so loading the cache does not rebuild 700,000 small objects.
ANALYSIS = "index-analysis"  # (its key's prefix: records of another shape are never read as these)


def _analysis_record(analysis: DocTerms) -> tuple[int, int, bytes]:
    terms, tfs, bits, length, unique = analysis
    return length, unique, pickle.dumps((terms, tfs, bits), protocol=pickle.HIGHEST_PROTOCOL)


def _analysis(record: tuple[int, int, bytes]) -> DocTerms:
    length, unique, blob = record
    terms, tfs, bits = pickle.loads(blob)
    return terms, tfs, bits, length, unique


UPDATE_SHARE = 4  # update the previous postings when at most 1/UPDATE_SHARE of the skills changed


def _updated_postings(cache, previous, keys: list[str], records: list) -> tuple[Postings, frozenset[str]] | None:
    """The previous build's postings updated for the skills whose analysis changed, and the terms
    whose postings that touched; None (invert them all) when there are none, the skills differ, or
    too many changed."""
    if previous is None:
        return None
    old_keys, postings, _ = previous
    if len(old_keys) != len(keys):
        return None
    changed = [i for i, (old, new) in enumerate(zip(old_keys, keys)) if old != new]
    if len(changed) * UPDATE_SHARE > len(keys):
        return None
    try:
        changes = []
        for i in changed:
            old = cache.get("index", old_keys[i])  # the previous build kept it
            if old is None:
                return None
            changes.append((i, _analysis(old), _analysis(records[i])))
        touched = frozenset(t for _, old, new in changes for t in changed_terms(old, new))
        return update_postings(postings, changes), touched
    except (ValueError, TypeError, pickle.UnpicklingError):  # records that do not hold what their keys say
        return None  # (invert them all)


def emit_index(ctx: EmitContext) -> None:
    out: Path = ctx.out / INDEX_DIR
    out.mkdir(parents=True, exist_ok=True)
    whoosh = "whoosh" in _emits(ctx)
    docs = index_docs(ctx.resolution.skills)
    built = build(docs, keep_tokens=True) if whoosh else None
    files = dict(built.files if built is not None else _built_files(ctx, docs))
    files[SELECT_FILE] = dump_json(select_data(ctx))
    files[JS_READER] = (template_dir() / "js" / JS_READER).read_bytes()
    for name, data in files.items():
        with writing(out / name):
            (out / name).write_bytes(data)
    # (the manifest takes their digests from here instead of reading 650 files again)
    ctx.collected.known.update((f"{INDEX_DIR}/{name}", (hashlib.sha256(data).hexdigest(), len(data)))
                               for name, data in files.items())
    if whoosh:
        from .whoosh_emit import write_whoosh

        write_whoosh(out / "whoosh", docs, built.tokens)  # type: ignore[union-attr]
