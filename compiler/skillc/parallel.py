"""A fork-based parallel map for the build's CPU-bound, per-skill stages (lint, render).

Workers are forked after the inputs are in memory, so nothing but the (small) results is pickled.
Falls back to a plain loop with one job, few items, or where ``fork`` is unavailable.  Results come
back in input order, so the output does not depend on scheduling.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 64
_WORK: tuple[Callable, Sequence] | None = None
_CLOSE_IN_CHILD: list[int] = []  # fds (the build lock) a worker must not keep open


def default_jobs(env: dict | None = None) -> int:
    value = (env or os.environ).get("SKILLC_JOBS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(os.cpu_count() or 1, 8))


def _init() -> None:
    for fd in _CLOSE_IN_CHILD:
        try:
            os.close(fd)
        except OSError:
            pass


def _chunk(bounds: tuple[int, int]) -> list:
    fn, items = _WORK  # type: ignore[misc]
    return [fn(items[i]) for i in range(*bounds)]


def fork_map(fn: Callable[[T], R], items: Sequence[T], jobs: int,
             advance: Callable[[int], None] | None = None) -> list[R]:
    global _WORK
    n = len(items)
    if jobs <= 1 or n < MIN_ITEMS or "fork" not in multiprocessing.get_all_start_methods():
        out = []
        for item in items:
            out.append(fn(item))
            if advance:
                advance(1)
        return out
    size = max(16, n // (jobs * 8))
    chunks = [(lo, min(n, lo + size)) for lo in range(0, n, size)]
    _WORK = (fn, items)
    try:
        ctx = multiprocessing.get_context("fork")
        results: list[R] = []
        with ctx.Pool(jobs, initializer=_init) as pool:
            for (lo, hi), part in zip(chunks, pool.imap(_chunk, chunks)):
                results.extend(part)
                if advance:
                    advance(hi - lo)
        return results
    finally:
        _WORK = None
