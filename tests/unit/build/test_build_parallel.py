"""The build's forked map: results in input order, a worker's error raised to the caller, and the
asynchronous form returning before the work is done."""

from __future__ import annotations

import os
import threading
import time

import pytest

from skillc.errors import BuildError
from skillc.parallel import fork_map, fork_map_async


def _square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def test_results_come_back_in_order_from_other_processes():
    out = fork_map(_square_and_pid, list(range(500)), jobs=2)
    assert [v for v, _ in out] == [x * x for x in range(500)]
    assert {pid for _, pid in out} - {os.getpid()}  # the work was done by forked workers


def test_async_map_returns_at_once_and_raises_a_worker_error_on_result():
    def fail_on_300(x: int) -> int:
        if x == 300:
            raise BuildError(f"item {x} is broken")
        return x

    pending = fork_map_async(fail_on_300, list(range(500)), jobs=2)
    with pytest.raises(BuildError, match="item 300 is broken"):
        pending.result()
    threads = threading.active_count()
    ok = fork_map_async(lambda x: -x, list(range(200)), jobs=2)
    ok.cancel()  # a build that fails meanwhile stops the workers without waiting for them
    deadline = time.monotonic() + 10
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= threads  # and its collecting thread ends too
    assert fork_map_async(lambda x: -x, list(range(10)), jobs=2).result() == [-x for x in range(10)]


def test_a_finished_build_leaves_no_descriptor_for_later_workers_to_close(tmp_path):
    # Workers close the build lock's descriptor while the lock is held. A build that kept the number
    # registered made every later pool's workers close whatever reused it (their own pipe): they died
    # at once and the pool replaced them forever (a hang seen when tests shared a process).
    from conftest import write_skill
    from skillc import parallel
    from skillc.build.pipeline import BuildOptions, run_build

    write_skill(tmp_path / "repo", "one")
    run_build(BuildOptions(paths=(str(tmp_path / "repo"),), out=str(tmp_path / "out"), site=False,
                           cache_dir=tmp_path / "cache", cwd=tmp_path, env={}, home=tmp_path))
    assert parallel.CLOSE_IN_CHILD == []
    taken = [os.open(os.devnull, os.O_RDONLY) for _ in range(8)]  # the lock's number is reused
    try:
        out = fork_map(_square_and_pid, list(range(300)), jobs=2)
        assert [v for v, _ in out] == [x * x for x in range(300)]
    finally:
        for fd in taken:
            os.close(fd)


def test_a_worker_that_dies_fails_the_map_instead_of_hanging(tmp_path):
    # (in a child process with a time limit, so a regression fails the test instead of hanging it)
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, signal
        from skillc.errors import SkillcError
        from skillc.parallel import fork_map

        def work(x):
            if x == 150:
                os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's out-of-memory killer does
            return x

        try:
            fork_map(work, list(range(300)), jobs=2)
        except SkillcError as exc:
            print("raised:", exc, "/", exc.hint)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert "raised: a build worker process died" in proc.stdout and "SKILLC_JOBS=1" in proc.stdout, proc.stderr
