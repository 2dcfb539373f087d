"""A fork-based parallel map for the build's CPU-bound, per-skill stages (lint, render).

Workers are forked after the inputs are in memory, so nothing but the (small) results is pickled.
Falls back to a plain loop with one job, few items, or where ``fork`` is unavailable.  Results come
back in input order, so the output does not depend on scheduling.

``fork_map_async`` starts the same work and returns at once: the caller does something else (the
build computes the search index while the workers write the skills' files) and collects the
results with ``.result()``.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

from .errors import SkillcError

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 64
_WORK: dict[int, tuple[Callable, Sequence]] = {}  # job id -> (fn, items), inherited by forked workers
_JOB_IDS = itertools.count()
CLOSE_IN_CHILD: list[int] = []  # open fds a worker must not keep (the build lock, while it is held)


def default_jobs(env: dict | None = None) -> int:
    value = (env or os.environ).get("SKILLC_JOBS", "")
    if value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(os.cpu_count() or 1, 8))


def die_with_parent(parent: int, forked_by_caller: bool = True) -> None:
    """In a forked worker: be killed as soon as the process that forked it dies (``kill -9``
    included), instead of working on alone (writing into a staging folder nobody will use) and
    printing broken-pipe tracebacks.  Linux's ``PR_SET_PDEATHSIG``; elsewhere only the check below.

    The signal comes when the *thread* that forked the worker ends, so only workers forked by a
    thread that outlives them ask for it: not a pool's replacement for a dead worker, which its
    worker-handler thread forks (that thread ends first in ``terminate()``, and a worker killed
    while it holds the task queue's lock would leave ``terminate()`` waiting forever)."""
    if sys.platform.startswith("linux") and forked_by_caller:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before that took effect
        os._exit(1)
    # Ctrl-C on a terminal signals the whole process group: the parent stops the workers (and says
    # so in one line); a worker that took the KeyboardInterrupt itself would print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (the command's handler unwinds the parent, not a worker)
    if hasattr(signal, "pthread_sigmask"):  # (forked with them held: see signals_held; a pending SIGINT is dropped now)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def child_dies_with_build() -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess``: the program (mkdocs, git) is killed when this process
    dies, ``kill -9`` included, instead of running on re-parented and still writing into the
    staging folder.  Linux's ``PR_SET_PDEATHSIG`` (the function is looked up here, before the fork:
    the child may only call it); None elsewhere.  It stays in this process's group, so a Ctrl-C on
    the terminal reaches it too.  Call it from the thread that waits for the program (the signal
    comes when the forking *thread* ends)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the build died before that took effect
            os._exit(1)

    return preexec


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held (blocked) meanwhile; they are delivered at the end.

    While workers are forked: a Ctrl-C or `kill` in that moment would otherwise reach a new worker
    before it puts the default handling back: it dies with a traceback, its pool forks a
    replacement and the interrupted build can hang stopping them.  Held, the signal reaches each
    worker once it is ready (``die_with_parent``), and this process as soon as the forking is done."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Ctrl-C and SIGTERM that arrive meanwhile take effect at the end, around work that must be
    done whole (the renames that move an import's skills into place).  Python runs signal handlers
    in the main thread whichever thread the signal reached, so the handlers themselves wait (a
    blocked signal mask in one thread would not hold a signal another thread takes)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: pending.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if pending:
            handler = old[pending[0]]
            if callable(handler):
                handler(pending[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(pending[0])


_PR_SET_PDEATHSIG = 1
_FORKED_BY_CALLER = False  # True while the calling thread forks a pool's first workers (see above)


def _init(parent: int) -> None:
    die_with_parent(parent, _FORKED_BY_CALLER)  # (the value this worker was forked with)
    _close_inherited()


def _close_inherited() -> None:
    for fd in CLOSE_IN_CHILD:
        try:
            os.close(fd)
        except OSError:
            pass


def _chunk(task: tuple[int, int, int]) -> list:
    job, lo, hi = task
    fn, items = _WORK[job]
    return [fn(items[i]) for i in range(lo, hi)]


WATCH_SECONDS = 0.5  # how often a map that waits for its workers checks that they are all alive


def _worker_pids(pool) -> frozenset[int]:
    """The pool's worker processes (``Pool._pool``: a pool never replaces a live worker of its own
    accord, as it is made without ``maxtasksperchild``)."""
    return frozenset(p.pid for p in pool._pool)


def _serial(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> bool:
    return jobs <= 1 or len(items) < MIN_ITEMS or "fork" not in multiprocessing.get_all_start_methods()


class Pending(Generic[R]):
    """Results being computed by forked workers; ``result()`` waits for them (in input order) and
    re-raises a worker's exception; ``cancel()`` stops the workers."""

    def __init__(self, fn: Callable[[T], R], items: Sequence[T], jobs: int,
                 advance: Callable[[int], None] | None) -> None:
        self._results: list[R] = []
        self._error: BaseException | None = None
        self._pool = None
        self._thread: threading.Thread | None = None
        self._cancelled = False  # tells the collecting thread to stop waiting
        self._job = -1
        if _serial(fn, items, jobs):
            self._items = (fn, items, advance)
            return
        self._items = None
        n = len(items)
        size = max(16, n // (jobs * 8))
        self._job = job = next(_JOB_IDS)
        tasks = [(job, lo, min(n, lo + size)) for lo in range(0, n, size)]
        _WORK[job] = (fn, items)
        global _FORKED_BY_CALLER
        _FORKED_BY_CALLER = True
        try:
            with signals_held():
                self._pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_init,
                                                                      initargs=(os.getpid(),))
        except BaseException:  # (a Ctrl-C held while forking arrives here: the pool is stopped)
            if self._pool is not None:
                self._close(terminate=True)
            _WORK.pop(job, None)
            raise
        finally:
            _FORKED_BY_CALLER = False
        self._thread = threading.Thread(target=self._collect, args=(tasks, advance), daemon=True)
        self._thread.start()

    def _collect(self, tasks: list[tuple[int, int, int]], advance: Callable[[int], None] | None) -> None:
        try:
            pool = self._pool
            results = pool.imap(_chunk, tasks)  # type: ignore[union-attr]
            workers = _worker_pids(pool)
            for _, lo, hi in tasks:
                while True:
                    try:
                        part = results.next(timeout=WATCH_SECONDS)
                        break
                    except multiprocessing.TimeoutError:
                        if self._cancelled:
                            return
                        # A pool replaces a worker that dies (killed, out of memory) but loses its
                        # chunk: without this check the build would wait for it forever.
                        if _worker_pids(pool) != workers:
                            raise SkillcError("a build worker process died (killed, or out of memory?)",
                                              hint="run again; if it dies again, use fewer workers: SKILLC_JOBS=1") \
                                from None
                self._results.extend(part)
                if advance:
                    advance(hi - lo)
        except BaseException as exc:  # re-raised by result()
            self._error = exc

    def result(self) -> list[R]:
        if self._items is not None:  # serial: the work happens now, in this process
            fn, items, advance = self._items
            self._items = None
            for item in items:
                self._results.append(fn(item))
                if advance:
                    advance(1)
            return self._results
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self._close(terminate=self._error is not None)
        if self._error is not None:
            raise self._error
        return self._results

    def cancel(self) -> None:
        self._items = None
        self._cancelled = True
        if self._pool is not None:
            self._close(terminate=True)
        self._thread = None  # (a daemon: it sees ``_cancelled`` within WATCH_SECONDS and ends)

    def _close(self, terminate: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            if terminate:
                pool.terminate()
            else:
                pool.close()
            pool.join()
        _WORK.pop(self._job, None)


def fork_map_async(fn: Callable[[T], R], items: Sequence[T], jobs: int,
                   advance: Callable[[int], None] | None = None) -> Pending[R]:
    """Start ``fork_map`` and return at once (with one job or few items the work is done by
    ``result()``, in this process)."""
    return Pending(fn, items, jobs, advance)


def fork_map(fn: Callable[[T], R], items: Sequence[T], jobs: int,
             advance: Callable[[int], None] | None = None) -> list[R]:
    pending = Pending(fn, items, jobs, advance)
    try:
        return pending.result()
    except BaseException:
        pending.cancel()
        raise


def can_fork(jobs: int) -> bool:
    """Whether work may go to a forked process: ``fork`` exists, more than one job is asked for,
    and no other thread runs (a thread holding a lock while this process forks leaves the lock
    held for ever in the child)."""
    return (jobs >= 2 and "fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1)


class Forked(Generic[R]):
    """``fn()`` running in a forked process (started by ``fork_call``): ``result()`` waits for it and
    returns its (pickled) value or raises its exception; ``cancel()`` kills it.  The process dies
    with this one (``die_with_parent``: Ctrl-C and ``kill -9`` of the build leave no orphan), and
    keeps none of ``CLOSE_IN_CHILD``."""

    def __init__(self, fn: Callable[[], R]) -> None:
        read, write = os.pipe()
        parent = os.getpid()
        with signals_held():  # (a Ctrl-C now reaches the child only once it ignores it)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child (coverage does not follow os.fork)
                os.close(read)
                die_with_parent(parent)
                _close_inherited()
                _run_forked(fn, write)
        os.close(write)
        self.pid, self._read = pid, read
        self._done = False

    def result(self) -> R:
        import pickle

        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 20):
                chunks.append(chunk)
        except BaseException:  # (Ctrl-C while waiting: the child ignores it, so it is killed)
            self.cancel()
            raise
        self._close()
        self._reap()
        if not chunks:
            raise SkillcError("a build worker process died (killed, or out of memory?)",
                              hint="run again; if it dies again, build with SKILLC_JOBS=1")
        ok, value = pickle.loads(b"".join(chunks))
        if not ok:
            raise value
        return value

    def cancel(self) -> None:
        if not self._done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self._close()
        self._reap()

    def _close(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def _reap(self) -> None:
        if not self._done:
            self._done = True
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


def _run_forked(fn: Callable[[], R], write: int) -> None:  # pragma: no cover - runs in the child
    """The forked process: run ``fn``, send ``(True, value)`` or ``(False, exception)`` pickled, and
    end without the parent's exit handlers (they belong to the build)."""
    import pickle
    import traceback

    code = 0
    try:
        try:
            data = pickle.dumps((True, fn()), pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, raised there
            # (a bug: its traceback is shown once, from where it happened; not an error of the
            # environment, a full disk say, which the build reports in one line)
            if not isinstance(exc, (SkillcError, OSError)):
                traceback.print_exc()
                sys.stderr.flush()
            try:
                data = pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its type and message
                data = pickle.dumps((False, SkillcError(f"{type(exc).__name__}: {exc}")), pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(write, view):]
    except BaseException:  # noqa: BLE001 - the parent sees an empty answer: "died"
        code = 1
    finally:
        os._exit(code)


def fork_call(fn: Callable[[], R], jobs: int) -> Forked[R] | None:
    """Start ``fn()`` in a forked process (``Forked``); None where it must run in this one
    (``can_fork``: one job, no ``fork``, other threads running)."""
    return Forked(fn) if can_fork(jobs) else None
