"""``skillc mcp``: what the protocol adds to a bundle call, and the server's start-up (issue 20).

Measured in one run on one bundle built from the synthetic corpus: p50/p95 of ``load_skill`` and
``search_skills`` through the official SDK client over stdio (one session, after warm-up) beside the
same calls on a ``Bundle`` in this process (the baseline), and the start-up of ``skillc mcp``: from
spawning it to the answer of its first ``tools/list`` (median of 3), beside ``skillc --version``.
Targets: the protocol adds <= 2 ms at p95; start-up <= 1 s.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

CALLS = 300
WARMUP = 30
WORDS = ["deploy", "test", "pdf", "review", "docker", "python", "api", "schema", "lint", "release", "data", "log"]


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def _skillc() -> list[str]:
    exe = Path(sys.executable).parent / "skillc"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "skillc"]


def _startup(dist: Path) -> float:
    import anyio
    from mcp import Client, StdioServerParameters

    cmd = _skillc()

    async def main() -> float:
        t0 = time.perf_counter()
        async with Client(StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", str(dist)])) as c:
            await c.list_tools()
            return time.perf_counter() - t0
    return anyio.run(main)


def _startup_cpu(dist: Path) -> float:
    """CPU seconds (user + system) of a ``skillc mcp`` that starts, is ready, and sees its standard input
    end: its start-up work, which a loaded machine does not inflate as it inflates wall time."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*_skillc(), "mcp", str(dist)], stdin=subprocess.DEVNULL, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _through_mcp(dist: Path, ids: list[str], queries: list[str], calls: bool = True):
    """Latencies of both tools through one stdio session, the client's CPU seconds for the timed calls,
    and the server process's CPU seconds (read once it has exited)."""
    import anyio
    from mcp import Client, StdioServerParameters

    cmd = _skillc()

    async def main():
        async with Client(StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", str(dist)])) as c:
            if not calls:  # (the same session without the calls: the server's start-up and warm-up CPU)
                for i in range(WARMUP):
                    await c.call_tool("load_skill", {"id": ids[i]})
                    await c.call_tool("search_skills", {"query": queries[i]})
                return [], [], 0.0
            for i in range(WARMUP):
                await c.call_tool("load_skill", {"id": ids[i]})
                await c.call_tool("search_skills", {"query": queries[i]})
            load, search = [], []
            cpu = time.process_time()
            for skill_id, query in zip(ids[WARMUP:], queries[WARMUP:]):
                t0 = time.perf_counter()
                r = await c.call_tool("load_skill", {"id": skill_id})
                load.append(time.perf_counter() - t0)
                assert not r.is_error
                t0 = time.perf_counter()
                await c.call_tool("search_skills", {"query": query})
                search.append(time.perf_counter() - t0)
            return load, search, time.process_time() - cpu
    before = _children_cpu()
    load, search, client_cpu = anyio.run(main)
    return load, search, client_cpu, _children_cpu() - before


def _direct(dist: Path, ids: list[str], queries: list[str]) -> tuple[list[float], list[float]]:
    from skillc import Bundle

    b = Bundle.open(dist)
    for i in range(WARMUP):
        b.load_skill(ids[i])
        b.search(queries[i])
    load, search = [], []
    cpu = time.process_time()
    for skill_id, query in zip(ids[WARMUP:], queries[WARMUP:]):
        t0 = time.perf_counter()
        b.load_skill(skill_id)
        b.skill_memory_block(skill_id)  # (what the tool does besides)
        load.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b.search(query)
        search.append(time.perf_counter() - t0)
    return load, search, time.process_time() - cpu


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return [("skipped", "the mcp extra is not installed (pip install 'skillc[mcp]')")]
    from skillc import Bundle

    dist = workdir / "dist"
    subprocess.run([*_skillc(), "build", str(corpus), "--out", str(dist), "--no-site"], check=True,
                   capture_output=True)
    skills = [s.id for s in Bundle.open(dist).skills()]
    rng = random.Random(20)
    ids = [rng.choice(skills) for _ in range(CALLS + WARMUP)]
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(CALLS + WARMUP)]
    load_mcp, search_mcp, client_cpu, server_cpu = _through_mcp(dist, ids, queries)
    server_idle = _through_mcp(dist, ids, queries, calls=False)[3]
    load_direct, search_direct, direct_cpu = _direct(dist, ids, queries)
    starts = sorted(_startup(dist) for _ in range(3))
    version = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([*_skillc(), "--version"], check=True, capture_output=True)
        version.append(time.perf_counter() - t0)
    rows = [("skills in the bundle", f"{len(skills):,}")]
    for name, via, direct in (("load_skill", load_mcp, load_direct), ("search_skills", search_mcp, search_direct)):
        for q in (50, 95):
            m, d = _pct(via, q) * 1000, _pct(direct, q) * 1000
            rows.append((f"{name} p{q} via MCP / direct Bundle", f"{m:.2f} ms / {d:.2f} ms "
                                                                 f"(protocol adds {m - d:.2f} ms, {m / d:.1f}x)"))
    per_call = 1000 / (2 * CALLS)
    served = (server_cpu - server_idle) * per_call
    rows.append(("CPU per call via MCP: server + SDK client / direct Bundle",
                 f"{served:.2f} + {client_cpu * per_call:.2f} ms / {direct_cpu * per_call:.2f} ms (protocol adds "
                 f"{served + client_cpu * per_call - direct_cpu * per_call:.2f} ms of CPU)"))
    start, base = starts[1], statistics.median(version)
    rows.append(("start-up to first tools/list (median of 3)", f"{start * 1000:.0f} ms (target <= 1000 ms)"))
    rows.append(("skillc --version (baseline)", f"{base * 1000:.0f} ms ({start / base:.1f}x)"))
    cpu = sorted(_startup_cpu(dist) for _ in range(3))[1]
    rows.append(("start-up CPU time, user + system (median of 3)", f"{cpu * 1000:.0f} ms"))
    rows.append(("load average while measured", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"))
    return rows
