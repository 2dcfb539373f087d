"""A small HTTP/1.1 load generator (asyncio, standard library): every request on a new connection.

``load(host, port, paths, total, concurrency)`` sends ``total`` GETs, at most ``concurrency`` in
flight, each over its own TCP connection (``Connection: close``, as a fleet of agents without a
pool does), and returns a ``LoadResult``: latencies of the answered requests (connect to last
byte), errors (refused, reset, timed out, a status other than 200/304) and the wall time.
A request that takes longer than ``timeout`` seconds is an error.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class LoadResult:
    latencies: tuple[float, ...]  # seconds, sorted
    errors: int
    wall: float

    def quantile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        return self.latencies[min(len(self.latencies) - 1, int(len(self.latencies) * q))]

    def summary(self) -> str:
        return (f"{len(self.latencies):,} ok, {self.errors} errors, p50 {self.quantile(0.5) * 1000:.1f} ms, "
                f"p99 {self.quantile(0.99) * 1000:.1f} ms, max {self.quantile(1.0) * 1000:.1f} ms, "
                f"{len(self.latencies) / self.wall:,.0f} req/s")


async def _one(host: str, port: int, path: str, timeout: float) -> float | None:
    started = time.perf_counter()
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\n"
                         "Connection: close\r\n\r\n".encode())
            await writer.drain()
            answer = await reader.read()  # (until the server closes: Connection: close)
    except (OSError, TimeoutError, asyncio.IncompleteReadError):
        return None
    finally:
        if writer is not None:
            writer.close()
    if not answer.startswith((b"HTTP/1.1 200", b"HTTP/1.1 304", b"HTTP/1.0 200")):
        return None
    return time.perf_counter() - started


async def _load(host: str, port: int, paths: list[str], total: int, concurrency: int,
                timeout: float) -> LoadResult:
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    errors = 0

    async def task(i: int) -> None:
        nonlocal errors
        async with gate:
            took = await _one(host, port, paths[i % len(paths)], timeout)
        if took is None:
            errors += 1
        else:
            latencies.append(took)

    started = time.perf_counter()
    await asyncio.gather(*(task(i) for i in range(total)))
    return LoadResult(tuple(sorted(latencies)), errors, time.perf_counter() - started)


def load(host: str, port: int, paths: list[str], total: int = 2000, concurrency: int = 50,
         timeout: float = 10.0) -> LoadResult:
    return asyncio.run(_load(host, port, paths, total, concurrency, timeout))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--total", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    print(load("127.0.0.1", args.port, args.paths, args.total, args.concurrency).summary())
