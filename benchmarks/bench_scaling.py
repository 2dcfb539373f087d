"""Growth on pathological inputs: the same input at size n and 4n, and the ratio of their times.

A linear stage grows about 4x; a quadratic one about 16x.  Each case is a shape a real repository
can have and that once grew quadratically (a performance hunt on 26 Nov 2026); the rows say what is
measured, in-process, so start-up does not blur the ratio:

* secret scan of one file holding many credentials (a fixture, a seed-data dump): ``secrets.scan``;
* bundle path collisions of a skill with many files and many skills nested in it: ``bundle_collisions``;
* one ``name`` shared by many skills: ``lint_root`` with the collection rules (C801);
* memory tombstones (``forget: true``) among many memories: ``memory freeze``'s consolidation
  tested every memory against every tombstone (found by a later hunt; now each memory meets only
  the tombstones indexed under its tokens' prefixes, by each tombstone's rarest term);
* memory near-duplicates among memories drawn from a small vocabulary: ``memory freeze``'s
  consolidation.  Still quadratic on such input (every pair shares common words, and the exact
  TF-IDF cosine is checked for each): the row shows how much.
"""

from __future__ import annotations

import random
import time
from pathlib import Path


def _timed(fn, repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _skill(folder: Path, name: str, body: str = "# Body\n\nDo the thing.\n") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}. Use when asked.\n---\n{body}")


def secret_scan(n: int) -> float:
    from skillc import secrets

    rng = random.Random(n)
    text = "\n".join(f"password: Zx9{rng.randrange(10**15):015d}Qw" for _ in range(n))
    return _timed(lambda: secrets.scan(text))


def collisions(workdir: Path, n: int) -> float:
    from skillc.emit.skills import bundle_collisions
    from skillc.resolve_types import Repository, Tier
    from skillc.sources import open_source
    from skillc.validate.lint import LintConfig

    root = workdir / f"nest-{n}"
    _skill(root / "pack", "pack")
    (root / "pack/references").mkdir()
    for i in range(n):
        (root / f"pack/references/r{i:05d}.md").write_text(f"reference {i}\n")
    for i in range(n // 10):
        _skill(root / f"pack/child-{i:04d}", f"child-{i:04d}")
    repo = Repository("r", "filesystem", str(root), Tier.PROJECT, 250, 0)
    skills = open_source(repo, cache_dir=workdir / "cache", lint=LintConfig()).skills().skills
    return _timed(lambda: bundle_collisions(skills))


def shared_name(workdir: Path, n: int) -> float:
    from skillc.validate.lint import lint_root

    root = workdir / f"names-{n}"
    for i in range(n):
        _skill(root / f"c{i:05d}/same", "same")
    return _timed(lambda: lint_root(root, documents=False), repeat=1)


def near_duplicates(n: int) -> float:
    from skillc.memory.consolidate import consolidate
    from skillc.memory.model import MemoryEntry
    from skillc.memory.settings import MemorySettings

    rng = random.Random(5)
    pool = [f"w{k}" for k in range(200)]
    fields = MemoryEntry.__dataclass_fields__
    entries = []
    for i in range(n):
        values = {"id": f"m{i:06d}", "type": "semantic", "category": "convention", "namespace": "project/acme",
                  "content": " ".join(rng.sample(pool, 10)), "importance": 0.5 + (i % 50) / 100,
                  "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                  "last_accessed_at": "2026-01-01T00:00:00Z"}
        entries.append(MemoryEntry(**{k: v for k, v in values.items() if k in fields}))
    settings = MemorySettings(max_memories_per_namespace=0)  # (0: no cap, every memory is compared)
    return _timed(lambda: consolidate(entries, settings, 1_700_000_000.0), repeat=1)


def tombstones(n: int) -> float:
    from skillc.memory.consolidate import consolidate
    from skillc.memory.model import MemoryEntry
    from skillc.memory.settings import MemorySettings

    fields = MemoryEntry.__dataclass_fields__
    entries = []
    for i in range(n + n // 10):
        values = {"id": f"m{i:06d}", "type": "semantic", "category": "convention", "namespace": "project/acme",
                  "content": f"Use convention u{i} for module v{i * 7} and the deploy w{i}", "importance": 0.6,
                  "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                  "last_accessed_at": "2026-01-01T00:00:00Z"}
        if i >= n:  # a tombstone ("forget that ..."): a word every memory has, and one none has
            values.update(id=f"t{i:06d}", forget=True, content=f"the deploy u{i}x", created_at="2026-01-15T00:00:00Z")
        entries.append(MemoryEntry(**{k: v for k, v in values.items() if k in fields}))
    return _timed(lambda: consolidate(entries, MemorySettings(), 1_700_000_000.0), repeat=1)


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    cases = [
        ("secret scan, credentials in one file", lambda n: secret_scan(n), 4000),
        ("bundle collisions, parent files (nested skills: a tenth)", lambda n: collisions(workdir, n), 500),
        ("lint, one name shared by n skills", lambda n: shared_name(workdir, n), 500),
        ("memory tombstones, n memories and n/10 forgets", lambda n: tombstones(n), 1000),
        ("memory consolidation, 10 words of a 200-word vocabulary", lambda n: near_duplicates(n), 500),
    ]
    rows = []
    for label, fn, n in cases:
        small, large = fn(n), fn(4 * n)
        rows.append((label, (f"n={n:,}: {small:.3f} s, 4n: {large:.3f} s -> x{large / max(small, 1e-9):.1f} "
                             "(linear: x4, quadratic: x16)")))
    return rows
