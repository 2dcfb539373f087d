"""Memory: freeze 100,000 synthetic memories (time, peak memory) and search them (p50/p95).

Baselines measured in the same run:

* freeze — a plain copy of the same input: read every JSONL line with ``json.loads`` and write one
  JSON array (no validation, redaction, consolidation, SQLite or prompt);
* search — the seed's algorithm done plainly: score *every* active memory with the same relevance
  formula (TF-IDF vectors precomputed), sort, take 10; versus ``MemoryIndex.search`` (inverted index).

Freezes run as ``skillc memory freeze`` subprocesses; peak memory is each child's maximum resident set
(``os.wait4``).  ``SKILLC_BENCH_MEMORIES`` changes the count (default 100,000).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

N = int(os.environ.get("SKILLC_BENCH_MEMORIES", "100000"))
SEED = 20261122
QUERIES = 200
BASELINE_QUERIES = 20
CATEGORIES = ("preference", "convention", "pattern", "correction", "fact")


def _vocabulary(rng: random.Random) -> list[str]:
    from synthetic import WORDS

    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "dri", "ston", "vel", "mar"]
    made = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(6000)}
    return list(WORDS) + sorted(made)


def make_memories(path: Path, n: int, seed: int = SEED) -> list[str]:
    """Write ``n`` memories as JSONL (about 5% exact and 5% near duplicates); return the vocabulary."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(vocab))]  # Zipf-like: a few common words, many rare
    cum = list(itertools.accumulate(weights))
    previous: list[tuple[str, int]] = []  # (content, index) of recent memories, to copy
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            r = rng.random()
            slot = i
            if r < 0.05 and previous:
                content, slot = rng.choice(previous)
                content = content.upper()  # an exact duplicate after normalisation, same namespace and category
            elif r < 0.10 and previous:
                content, slot = rng.choice(previous)
                content = content + " " + rng.choice(vocab[2000:])  # a near duplicate
            else:
                content = " ".join(rng.choices(vocab, cum_weights=cum, k=rng.randint(8, 20))).capitalize() + "."
                previous.append((content, i))
                if len(previous) > 500:
                    previous.pop(0)
            day = rng.randint(1, 28)
            entry = {
                "id": f"bench-{i:06d}", "category": CATEGORIES[slot % 5], "content": content,
                "namespace": f"project/p{slot % 200:03d}" if slot % 4 else "global",
                "keywords": rng.sample(vocab[:300], 2), "importance": round(rng.uniform(0.3, 1.0), 3),
                "access_count": rng.randint(0, 20), "created_at": f"2026-01-{day:02d}T00:00:00Z",
                "last_accessed_at": f"2026-02-{day:02d}T00:00:00Z",
            }
            fh.write(json.dumps(entry) + "\n")
    return vocab


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed: {err[-2000:]}")
    return elapsed, usage.ru_maxrss * 1024  # kilobytes on Linux


PLAIN_COPY = "import json,sys\nrows=[json.loads(l) for l in open(sys.argv[1],encoding='utf-8')]\n" \
             "json.dump(rows,open(sys.argv[2],'w',encoding='utf-8'))\n"


def _plain_search(index, query: str) -> list[str]:
    """Score every active memory (the seed's flow without an index)."""
    from skillc.memory.text import cosine, terms

    q = terms(query)
    qv = index.idf.vector(q, known_only=True)
    qs = set(q)
    scored = []
    for i, e in enumerate(index.entries):
        if e["effective_importance"] < 0.1:  # search()'s default min_importance
            continue
        vec = index._plain_vectors[i]
        kw = index._plain_kw[i]
        inter = len(qs & kw)
        jac = inter / (len(qs) + len(kw) - inter) if inter else 0.0
        sim = cosine(qv, vec)
        scored.append((0.40 * sim + 0.25 * jac + index._base[i], e["id"]))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [i for _, i in scored[:10]]


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    del corpus  # memories are generated here
    rows: list[tuple[str, str]] = []
    mem = workdir / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    src = mem / "bench.jsonl"
    t0 = time.perf_counter()
    vocab = make_memories(src, N)
    rows.append(("memories generated", f"{N:,} ({src.stat().st_size / 1e6:.1f} MB JSONL) in {time.perf_counter() - t0:.1f} s"))
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1772323200"}
    skillc = [sys.executable, "-m", "skillc"]
    out = workdir / "snap"
    t_freeze, rss_freeze = _run([*skillc, "memory", "freeze", str(mem), "--out", str(out), "--max-per-namespace", "0"],
                                env)
    t_plain, rss_plain = _run([sys.executable, "-c", PLAIN_COPY, str(src), str(workdir / "plain.json")], env)
    doc = json.loads((out / "snapshot.json").read_text())
    counts = doc["counts"]
    rows.append(("freeze: time", f"{t_freeze:.1f} s ({N / t_freeze:,.0f} memories/s)"))
    rows.append(("freeze: peak memory (RSS)", f"{rss_freeze / 2**20:.0f} MiB"))
    rows.append(("freeze: kept / merged / pruned",
                 (f"{counts['kept']:,} / {counts.get('duplicates', 0):,} exact + "
                  f"{counts.get('near_duplicates', 0):,} near / {counts['pruned']:,}")))
    rows.append(("freeze: output", (f"snapshot.json {(out / 'snapshot.json').stat().st_size / 1e6:.1f} MB, "
                                    f"snapshot.sqlite {(out / 'snapshot.sqlite').stat().st_size / 1e6:.1f} MB")))
    rows.append(("baseline plain JSON copy: time / peak", f"{t_plain:.1f} s / {rss_plain / 2**20:.0f} MiB"))
    rows.append(("freeze / baseline", f"{t_freeze / t_plain:.1f}× time, {rss_freeze / rss_plain:.1f}× memory"))
    del doc

    from skillc.memory.recall import MemoryIndex
    from skillc.memory.text import terms

    t0 = time.perf_counter()
    index = MemoryIndex.open(out)
    rows.append(("search: open snapshot + build index", f"{time.perf_counter() - t0:.1f} s ({len(index):,} active)"))
    rng = random.Random(SEED + 1)
    queries = [" ".join(rng.choice(vocab[:2000]) for _ in range(rng.randint(2, 4))) for _ in range(QUERIES)]
    times = []
    for q in queries:
        t = time.perf_counter()
        index.search(q)
        times.append(time.perf_counter() - t)
    index._plain_vectors = [index.idf.vector(terms(e["content"])) for e in index.entries]
    index._plain_kw = [set(terms(" ".join(e["keywords"]))) if e["keywords"] else set(terms(e["content"]))
                       for e in index.entries]
    base_times = []
    agree = 0
    for q in queries[:BASELINE_QUERIES]:
        t = time.perf_counter()
        plain = _plain_search(index, q)
        base_times.append(time.perf_counter() - t)
        agree += plain == [h.entry["id"] for h in index.search(q)]
    p50, p95 = _pct(times, 50) * 1000, _pct(times, 95) * 1000
    b50, b95 = _pct(base_times, 50) * 1000, _pct(base_times, 95) * 1000
    rows.append((f"search p50 / p95 ({QUERIES} queries, top 10)", f"{p50:.1f} ms / {p95:.1f} ms"))
    rows.append((f"baseline full scan p50 / p95 ({BASELINE_QUERIES} queries)", f"{b50:.0f} ms / {b95:.0f} ms"))
    rows.append(("speed-up (p50)", f"{b50 / p50:.0f}× (same top 10 in {agree}/{BASELINE_QUERIES} queries)"))
    return rows


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in run(Path(tmp), Path(tmp)):
            print(f"  {key:<48}  {value}")
