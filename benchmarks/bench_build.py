"""`skillc build` of the synthetic corpus (no site) against the floor, and incremental rebuilds.

* floor: read every file of every skill, SHA-256 it, parse SKILL.md (skillc's parser: YAML with
  positions) and tokenize the body (the index tokenizer) — the work any build must do;
* full build: a cold `run_build` (empty cache, empty output), everything the bundle holds but the
  site (wire API, files, zips, well-known index, inventory, search indexes, manifest…);
* rebuild after one skill changed: the first one (the previous bundle is the only one: unchanged
  files are hard-linked from it) and a later one (the generation swapped out last time is
  recycled as the staging folder), each as a share of the full build, with what each did again
  (skills parsed and rendered, source files read, skill folders listed: unchanged files whose
  stat did not change are not read).

Each build starts after an ``os.sync()``: the file system's writeback of the previous build (173 MB
at 10,000 skills) would otherwise land in the next one's timings.

Targets (issue 3): full build ≤ 3× the floor; a rebuild ≤ 10 % of the full build.  The floor does
not write anything; the *write floor* (creating the bundle's files and folders with constant bytes,
one process) shows what the file system alone costs for this layout, and the per-stage rows say
where the build's time goes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import time
from pathlib import Path


def floor(corpus: Path) -> float:
    from skillc.discover.walk import DiscoveryOptions, discover
    from skillc.index.tokenize import tokenize
    from skillc.parse.document import parse_document

    t0 = time.perf_counter()
    disc = discover(corpus, DiscoveryOptions(lightweight=False, conventions=False))
    for item in disc.items:
        skill_dir = os.path.join(disc.root, item.skill_dir)
        for dirpath, _, files in os.walk(skill_dir):
            for name in files:
                full = os.path.join(dirpath, name)
                with open(full, "rb") as fh:
                    raw = fh.read()
                hashlib.sha256(raw).hexdigest()
                if full.endswith("/" + item.file_name) and dirpath == skill_dir:
                    doc = parse_document(raw, item.path, item.kind, item.skill_dir)
                    tokenize(doc.body)
    return time.perf_counter() - t0


def write_floor(bundle: Path, dest: Path) -> tuple[float, int, int]:
    """Create the folders and files ``bundle`` holds (same names and sizes, constant bytes), one process:
    the file-system cost any build of this layout pays.  Returns (seconds, files, folders)."""
    dirs: list[str] = []
    files: list[tuple[str, int]] = []
    for dirpath, dirnames, filenames in os.walk(bundle):
        rel = os.path.relpath(dirpath, bundle)
        dirs.extend(os.path.normpath(os.path.join(rel, d)) for d in dirnames)
        files.extend((os.path.normpath(os.path.join(rel, f)), os.path.getsize(os.path.join(dirpath, f)))
                     for f in filenames)
    dest.mkdir()
    os.sync()
    t0 = time.perf_counter()
    for d in dirs:
        os.mkdir(dest / d)
    for rel, size in files:
        fd = os.open(dest / rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"x" * size)
        os.close(fd)
    seconds = time.perf_counter() - t0
    shutil.rmtree(dest)
    return seconds, len(files), len(dirs)


def _build(corpus: Path, out: Path, cache: Path):
    from skillc.build.pipeline import BuildOptions, run_build

    os.sync()  # the previous build's writeback is not charged to this one (it varied the timings ±50 %)
    t0 = time.perf_counter()
    result = run_build(BuildOptions(paths=(str(corpus),), out=str(out), site=False, cache_dir=cache,
                                    env={"SOURCE_DATE_EPOCH": "1700000000"}, cwd=out.parent))
    return time.perf_counter() - t0, result


def _work(result) -> str:
    """What a rebuild did again: skills parsed and rendered, source files read (the others' stats
    were unchanged) and skill folders listed."""
    st = result.stats
    return (f"parsed {st['parsed']}, rendered {st['rendered']}, files read {st.get('hashed', '?')}, "
            f"folders listed {st.get('listed', '?')}")


def _touch_one(corpus: Path, n: int) -> None:
    skill = sorted(corpus.rglob("SKILL.md"))[n]
    with open(skill, "a", encoding="utf-8") as fh:
        fh.write(f"\nEdited ({n}).\n")


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    work_corpus = workdir / "corpus"
    shutil.copytree(corpus, work_corpus)
    floors = [floor(work_corpus) for _ in range(2)]
    base = statistics.median(floors)
    out, cache = workdir / "dist", workdir / "cache"
    full, result = _build(work_corpus, out, cache)
    skills = len(result.resolution.skills)
    writes, n_files, n_dirs = write_floor(out, workdir / "write-floor")
    _touch_one(work_corpus, 1)
    first, r1 = _build(work_corpus, out, cache)
    _touch_one(work_corpus, 2)
    second, r2 = _build(work_corpus, out, cache)
    noop, r3 = _build(work_corpus, out, cache)
    rows = [
        ("skills", f"{skills:,} ({result.files:,} bundle files, {result.bytes / 1e6:.0f} MB)"),
        ("floor: read+sha256+parse+tokenize", f"{base:.2f} s (runs: {', '.join(f'{f:.2f}' for f in floors)})"),
        ("write floor: create the bundle's files", (f"{writes:.2f} s ({n_files:,} files, {n_dirs:,} folders, "
                                                    "same sizes, one process)")),
        ("full build, no site (cold cache)", (f"{full:.2f} s = {full / base:.2f}x floor (target <= 3x); "
                                              f"{full / (base + writes):.2f}x read floor + write floor")),
        ("rebuild, 1 skill changed (first)", f"{first:.2f} s = {100 * first / full:.1f}% of full ({_work(r1)})"),
        ("rebuild, 1 skill changed (recycled)", (f"{second:.2f} s = {100 * second / full:.1f}% of full "
                                                 f"(target <= 10%; {_work(r2)})")),
        ("rebuild, nothing changed", f"{noop:.2f} s = {100 * noop / full:.1f}% of full ({_work(r3)})"),
    ]
    # Where the time goes (run_build's own stage timings; stages under 0.05 s in all three are left out).
    stages = [k for k in result.timings
              if max(result.timings.get(k, 0), r1.timings.get(k, 0), r2.timings.get(k, 0)) >= 0.05]
    for k in stages:
        rows.append((f"  stage {k}", (f"full {result.timings.get(k, 0):.2f} s, first rebuild "
                                      f"{r1.timings.get(k, 0):.2f} s, recycled rebuild {r2.timings.get(k, 0):.2f} s")))
    return rows
