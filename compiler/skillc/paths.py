"""Path predicates and locations the stages share (on absolute, already-normalised OS paths: no I/O here)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePath


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (``/a/bc`` is not below ``/a/b``)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def shown_local_path(location: str | PurePath, base: str | PurePath) -> str:
    """A local folder as the bundle names and shows it: its path from ``base`` (the build folder),
    POSIX-style, ``..`` kept where it lies outside (``/home/ci/repo`` from ``/home/ci/work`` is
    ``../repo``), so nothing published names the build machine's whole paths; only its folder name
    when no relative path reaches it (another drive)."""
    try:
        return Path(os.path.relpath(location, base)).as_posix()
    except ValueError:
        return PurePath(location).name


def default_cache_root(env: Mapping[str, str] = os.environ) -> Path:
    """``$SKILLC_CACHE_DIR``, else ``$XDG_CACHE_HOME/skillc``, else ``~/.cache/skillc``."""
    if env.get("SKILLC_CACHE_DIR"):
        return Path(env["SKILLC_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "skillc"


__all__ = ["default_cache_root", "inside", "shown_local_path"]
