"""The one way skillc takes a lock: ``flock`` on an open descriptor, never waiting.  The build locks
``<work>/<name>.lock``, ``skillc import`` the folder it imports into; both refuse to run beside a
process holding it, and a worker forked while the lock is held must not inherit it."""

from __future__ import annotations

import errno
import fcntl
import os

from . import parallel


def try_lock(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting.  False when another process holds it
    (``fd`` stays open: the caller may read who holds it); any other failure closes ``fd`` and
    raises.  A held lock is closed in every worker forked later (``parallel.CLOSE_IN_CHILD``)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        os.close(fd)
        raise
    parallel.CLOSE_IN_CHILD.append(fd)
    return True


def release(fd: int) -> None:
    """Release a lock ``try_lock`` took, closing ``fd``."""
    # Unregistered before the number can be reused: a later worker closing it would close whatever
    # holds that number then (a pool's own pipe, whose workers then die at once).
    parallel.CLOSE_IN_CHILD.remove(fd)
    os.close(fd)  # closing releases the flock


__all__ = ["release", "try_lock"]
