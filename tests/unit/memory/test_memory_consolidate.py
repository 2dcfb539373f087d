"""Consolidation: duplicates merged with counts, near-duplicates kept as merged_from, supersession,
decay, pruning with reasons, tombstones — and nothing silently lost."""

from __future__ import annotations

import math

from skillc.memory.consolidate import consolidate, decay
from skillc.memory.model import entry_from_dict, epoch
from skillc.memory.settings import MemorySettings, settings_from_table

AS_OF = epoch("2026-03-01T00:00:00Z")
T = "2026-03-01T00:00:00Z"


def entries(*raws: dict):
    return [entry_from_dict(r, default_time=T)[0] for r in raws]


def all_ids(result) -> set[str]:
    ids = {c.entry.id for c in (*result.entries, *result.pruned)}
    for c in (*result.entries, *result.pruned):
        ids.update(m["id"] for m in c.merged_from)
    return ids


def test_exact_duplicates_merge_with_counts_added() -> None:
    es = entries(
        {"id": "a", "content": "Use  PNPM not npm.", "importance": 0.6, "access_count": 2, "keywords": ["pnpm"],
         "created_at": "2026-01-01", "last_accessed_at": "2026-02-01"},
        {"id": "b", "content": "use pnpm not npm.", "importance": 0.9, "access_count": 5, "keywords": ["npm"],
         "created_at": "2026-01-05", "last_accessed_at": "2026-02-20"},
        {"id": "c", "content": "use pnpm not npm.", "namespace": "project/other"},  # another namespace: kept apart
    )
    result = consolidate(es, MemorySettings(), AS_OF)
    kept = {c.entry.id: c for c in result.entries}
    assert set(kept) == {"b", "c"}
    b = kept["b"]
    assert b.entry.access_count == 7 and b.entry.importance == 0.9
    assert b.entry.created_at == "2026-01-01T00:00:00Z" and b.entry.last_accessed_at == "2026-02-20T00:00:00Z"
    assert b.entry.keywords == ("npm", "pnpm")
    assert [(m["id"], m["reason"], m["content"]) for m in b.merged_from] == [("a", "duplicate", "Use  PNPM not npm.")]
    assert result.stats["duplicates"] == 1


def test_near_duplicates_above_the_compaction_threshold_merge_within_namespace_and_category() -> None:
    base = "the frontend state lives in zustand stores under src/stores with one store per feature"
    es = entries(
        {"id": "n1", "content": base, "category": "convention", "importance": 0.8},
        {"id": "n2", "content": base + " module", "category": "convention", "importance": 0.5},
        {"id": "n3", "content": base + " files", "category": "fact", "importance": 0.5},  # other category
        {"id": "n4", "content": "routes are in src/routes", "category": "convention"},
    )
    result = consolidate(es, MemorySettings(max_memories_per_namespace=0), AS_OF)
    kept = {c.entry.id: c for c in result.entries}
    assert set(kept) == {"n1", "n3", "n4"}
    (m,) = kept["n1"].merged_from
    assert m["id"] == "n2" and m["reason"] == "near-duplicate" and 0.90 < m["similarity"] < 1.0
    # a stricter threshold keeps them apart
    strict = consolidate(es, MemorySettings(compaction_threshold=0.999), AS_OF)
    assert {c.entry.id for c in strict.entries} == {"n1", "n2", "n3", "n4"}


def test_near_duplicate_probe_finds_every_pair_a_full_comparison_finds() -> None:
    import random
    from itertools import combinations

    from skillc.memory.text import Idf, cosine, terms

    rng = random.Random(7)
    words = [f"w{i}" for i in range(60)]
    raws = []
    for i in range(150):
        toks = [rng.choice(words) for _ in range(rng.randint(3, 9))]
        if i % 5 == 0 and raws:  # many near copies
            toks = raws[-1]["content"].split() + [rng.choice(words)]
        raws.append({"id": f"e{i:03d}", "content": " ".join(toks), "importance": round(rng.random(), 2) or 0.5})
    es = entries(*raws)
    result = consolidate(es, MemorySettings(max_memories_per_namespace=0, min_importance=0), AS_OF)
    merged_pairs = {(c.entry.id, m["id"]) for c in result.entries for m in c.merged_from if m["reason"] == "near-duplicate"}
    idf = Idf([terms(e.content) for e in es])
    vec = {e.id: idf.vector(terms(e.content)) for e in es}
    survivors = {c.entry.id for c in result.entries}
    absorbed = {b for _, b in merged_pairs}
    assert all_ids(result) == {e.id for e in es}
    # compared with every pair: no two survivors are near-duplicates, every merge was above the threshold
    for a, b in combinations(sorted(survivors), 2):
        assert cosine(vec[a], vec[b]) <= 0.90, (a, b)
    assert merged_pairs and all(cosine(vec[a], vec[b]) > 0.90 for a, b in merged_pairs)
    assert absorbed.isdisjoint(survivors)


def test_supersedes_keeps_both_and_marks_the_older() -> None:
    es = entries(
        {"id": "tabs", "content": "Indent with tabs", "importance": 0.7},
        {"id": "spaces", "content": "Indent with four spaces", "importance": 0.9, "supersedes": "tabs"},
        {"id": "ghost", "content": "Use yarn", "supersedes": ["missing"],
         "provenance": {"file": "memory/m.yaml", "line": 9}},
    )
    result = consolidate(es, MemorySettings(), AS_OF)
    kept = {c.entry.id: c for c in result.entries}
    assert kept["tabs"].status == "superseded" and kept["tabs"].superseded_by == ("spaces",)
    assert kept["spaces"].status == "active"
    assert result.warnings == ("memory/m.yaml:9: entry 'ghost' supersedes 'missing', which is not among the memories",)


def test_entries_that_supersede_each_other_stay_active_with_a_warning() -> None:
    es = entries(
        {"id": "a", "content": "Use tabs", "supersedes": "b"},
        {"id": "b", "content": "Use spaces", "supersedes": "a"},
        {"id": "c", "content": "Use two spaces", "supersedes": "a"},
    )
    result = consolidate(es, MemorySettings(), AS_OF)
    kept = {c.entry.id: c for c in result.entries}
    # the cycle a <-> b hides neither; c, outside it, still supersedes a
    assert (kept["a"].status, kept["a"].superseded_by) == ("superseded", ("c",))
    assert kept["b"].status == kept["c"].status == "active"
    assert result.warnings == ("entries 'a', 'b' supersede each other; all of them are kept active "
                               "(remove the supersedes that is wrong)",)


def test_decay_and_pruning_reasons() -> None:
    assert decay(0.8, "2026-03-01T00:00:00Z", AS_OF) == 0.8
    assert math.isclose(decay(0.8, "2026-02-22T00:00:00Z", AS_OF), 0.8 * 0.95)  # 7 days → one step
    es = entries(
        {"id": "fresh", "content": "fresh memory", "importance": 0.5},
        {"id": "stale", "content": "stale memory", "importance": 0.2, "last_accessed_at": "2025-03-01"},
        {"id": "pinned", "content": "pinned note", "importance": 0.01, "namespace": "skill/pdf",
         "note": {"kind": "gotcha", "pinned": True}},
        {"id": "old", "content": "old but fine", "importance": 0.35, "created_at": "2025-12-01",
         "last_accessed_at": "2026-03-01"},
    )
    result = consolidate(es, settings_from_table({"retention": {"autoDeleteAfterDays": 30,
                                                                "autoDeleteMinImportance": 0.4}}), AS_OF)
    reasons = {c.entry.id: c.reason for c in result.pruned}
    eff = 0.2 * 0.95 ** (365 / 7)
    assert reasons == {
        "stale": f"effective importance {eff:.4f} is below retention.minImportance 0.1",
        "old": "older than retention.autoDeleteAfterDays (30) with effective importance 0.3500 below "
               "autoDeleteMinImportance 0.4",
    }
    kept = {c.entry.id: c for c in result.entries}
    assert set(kept) == {"fresh", "pinned"}
    assert kept["fresh"].effective_importance == 0.5


def test_per_namespace_maximum_prunes_the_least_important() -> None:
    es = entries(*({"id": f"m{i}", "content": f"memory number {i} about topic{i}", "importance": i / 10,
                    "namespace": "project/a"} for i in range(1, 6)),
                 {"id": "g", "content": "global one", "importance": 0.1})
    result = consolidate(es, MemorySettings(max_memories_per_namespace=2), AS_OF)
    assert {c.entry.id for c in result.entries} == {"m4", "m5", "g"}
    assert {c.entry.id: c.reason for c in result.pruned} == {
        f"m{i}": "beyond retention.maxMemoriesPerNamespace (2) in project/a" for i in (1, 2, 3)}


def test_tombstones_forget_older_matching_memories_into_pruned() -> None:
    es = entries(
        {"id": "db", "content": "Our staging database is read-only", "created_at": "2026-01-01"},
        {"id": "db2", "content": "The staging databases live in eu-west", "namespace": "project/x",
         "created_at": "2026-01-01"},
        {"id": "later", "content": "staging database moved", "created_at": "2026-02-20"},
        {"id": "t", "content": "staging database", "forget": True, "created_at": "2026-02-01",
         "provenance": {"file": "memory/x.yaml", "line": 4}},
    )
    result = consolidate(es, MemorySettings(), AS_OF)
    assert {c.entry.id: c.reason for c in result.pruned} == {
        "db": "forgotten by t (memory/x.yaml:4)", "db2": "forgotten by t (memory/x.yaml:4)"}
    assert {c.entry.id for c in result.entries} == {"later"}
    assert [t.id for t in result.tombstones] == ["t"]



def test_many_tombstones_forget_what_each_one_would_alone() -> None:
    """Tombstones are matched through an index of their rarest term: the same memories are
    forgotten, each by the first tombstone (in id order) that matches it, as testing every pair."""
    import random

    from skillc.memory.text import tokens

    rng = random.Random(7)
    words = ["deploy", "deployment", "staging", "db", "cache", "token", "ci", "release", "ü-ber", "x"]
    raws = [{"id": f"m{i:03d}", "content": " ".join(rng.sample(words, 3)) + f" item{i % 13}",
             "namespace": rng.choice(["project/a", "project/b"]), "created_at": f"2026-01-{1 + i % 28:02d}"}
            for i in range(150)]
    tombs = [{"id": f"t{k:02d}", "forget": True, "created_at": f"2026-01-{1 + (k * 3) % 28:02d}",
              "namespace": rng.choice(["project/a", "project/b", "global"]),
              "content": "the " + " ".join(rng.sample(words, rng.randint(1, 2)) + [f"item{k % 13}"][: k % 2]),
              **({"supersedes": [f"m{k * 5:03d}"]} if k % 4 == 0 else {})}
             for k in range(40)]
    result = consolidate(entries(*raws, *tombs), MemorySettings(min_importance=0), AS_OF)
    stop = {"that", "the", "a", "an", "i", "my", "about"}
    live, ts = entries(*raws), sorted(entries(*tombs), key=lambda t: t.id)
    expected = {}
    for e in live:
        for t in ts:
            query = [q for q in tokens(t.content) if q not in stop]
            if e.id in t.supersedes or ((t.namespace in ("global", e.namespace)) and e.created_at <= t.created_at
                                        and query and all(any(w.startswith(q) for w in tokens(e.content))
                                                          for q in query)):
                expected[e.id] = f"forgotten by {t.id}"
                break
    assert len(expected) > 20 and len(set(expected.values())) > 5
    assert {c.entry.id: c.reason for c in result.pruned if c.reason.startswith("forgotten")} == expected

def test_nothing_is_silently_lost() -> None:
    raws = [{"id": f"x{i}", "content": f"Fact {i % 7} about the build", "importance": (i % 10) / 10,
             "namespace": "global" if i % 2 else "project/p", "last_accessed_at": f"2026-0{1 + i % 2}-0{1 + i % 9}"}
            for i in range(60)]
    result = consolidate(entries(*raws), MemorySettings(max_memories_per_namespace=3), AS_OF)
    assert all_ids(result) == {r["id"] for r in raws}
    assert result.stats["input"] == 60


def test_settings_use_seed_001_names_and_reject_unknown_ones() -> None:
    import pytest

    from skillc.errors import ConfigError

    s = settings_from_table({"enabled": True, "retention": {"maxMemoriesPerNamespace": 5},
                             "retrieval": {"maxMemoriesInPrompt": 3, "includedTypes": ["semantic"]},
                             "extraction": {"autoExtract": True}})
    assert (s.max_memories_per_namespace, s.max_memories_in_prompt, s.included_types) == (5, 3, ("semantic",))
    assert s.to_json()["retention"]["maxMemoriesPerNamespace"] == 5
    with pytest.raises(ConfigError, match="unknown setting 'memory.retention.maxPerNamespace'"):
        settings_from_table({"retention": {"maxPerNamespace": 5}})
    with pytest.raises(ConfigError, match="between 0 and 1"):
        settings_from_table({"retention": {"minImportance": 2}})


def test_property_nothing_lost_and_order_independent() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["pnpm", "npm", "routes", "api", "tests", "vitest", "cargo", "check", "tabs", "spaces", "deploy", "friday"])
    raw = st.fixed_dictionaries({
        "content": st.lists(words, min_size=1, max_size=6).map(" ".join),
        "importance": st.floats(0, 1),
        "namespace": st.sampled_from(["global", "project/a", "project/b"]),
        "category": st.sampled_from(["preference", "fact"]),
        "last_accessed_at": st.sampled_from(["2025-01-01", "2026-02-01", "2026-02-28"]),
    })

    @settings(max_examples=60, deadline=None)
    @given(st.lists(raw, min_size=1, max_size=25), st.randoms(use_true_random=False),
           st.integers(0, 5))
    def check(raws, rnd, limit) -> None:
        items = [{**r, "id": f"r{i}"} for i, r in enumerate(raws)]
        es = entries(*items)
        s = MemorySettings(max_memories_per_namespace=limit)
        result = consolidate(es, s, AS_OF)
        assert all_ids(result) == {r["id"] for r in items}
        assert result.stats["kept"] + result.stats["pruned"] + result.stats.get("duplicates", 0) \
            + result.stats.get("near_duplicates", 0) == len(items)
        shuffled = list(es)
        rnd.shuffle(shuffled)
        again = consolidate(shuffled, s, AS_OF)
        assert [c.to_json() for c in again.entries] == [c.to_json() for c in result.entries]
        assert [c.to_json() for c in again.pruned] == [c.to_json() for c in result.pruned]

    check()


def test_an_exact_duplicate_of_a_merged_near_duplicate_says_which_it_duplicated() -> None:
    """`c` repeats `b` word for word and `b` is a near-duplicate of `a`: in `a`'s merged_from, `c` is
    a duplicate *of b* (it read as a duplicate of `a`, whose text differs)."""
    es = entries(
        {"id": "a", "content": "Always run the integration tests with pytest before merging a pull request into main",
         "importance": 0.9},
        {"id": "b", "content": "Always run the integration tests with pytest before merging any pull request into main",
         "importance": 0.5},
        {"id": "c", "content": "always run the integration tests with pytest before merging any pull request into  main",
         "importance": 0.4},
    )
    result = consolidate(es, MemorySettings(max_memories_per_namespace=0), AS_OF)
    (kept,) = result.entries
    assert kept.entry.id == "a"
    rows = {m["id"]: (m["reason"], m.get("duplicate_of")) for m in kept.merged_from}
    assert rows == {"b": ("near-duplicate", None), "c": ("duplicate", "b")}


def test_notes_of_different_kinds_with_the_same_text_merge() -> None:
    """seed 003's skill_memory is UNIQUE on (skill, tier, project, normalised hash): a gotcha and a
    workflow step saying the same thing were both kept active, and snapshot.sqlite's INSERT OR IGNORE
    dropped one of them without a word."""
    es = entries(
        {"id": "g", "namespace": "skill/pdf", "category": "correction", "content": "Flatten forms before merging.",
         "importance": 0.8, "note": {"kind": "gotcha", "tier": "global", "hit_count": 2}},
        {"id": "w", "namespace": "skill/pdf", "type": "procedural", "content": "flatten  forms before merging.",
         "procedure": {"name": "merge", "description": "Flatten forms"},
         "note": {"kind": "workflow", "tier": "global", "hit_count": 3}},
        {"id": "p", "namespace": "skill/pdf", "type": "procedural", "content": "Flatten forms before merging.",
         "procedure": {"name": "merge", "description": "Flatten forms"}},  # not a note: kept apart
    )
    result = consolidate(es, MemorySettings(), AS_OF)
    kept = {c.entry.id: c for c in result.entries}
    assert set(kept) == {"g", "p"}
    assert [(m["id"], m["reason"]) for m in kept["g"].merged_from] == [("w", "duplicate")]
    assert kept["g"].entry.note.hit_count == 5
