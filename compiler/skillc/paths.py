"""Path predicates the stages share (on absolute, already-normalised OS paths: no I/O here)."""

from __future__ import annotations

import os


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (``/a/bc`` is not below ``/a/b``)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


__all__ = ["inside"]
