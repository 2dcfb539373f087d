"""What ``skillc build`` is asked (``BuildOptions``, parsed by the command line or given by a
caller) and the facts about the output and the cache that follow from it alone.

Light on purpose: the build starts its head start (``build.early``) from these before it imports
its stages."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..parallel import default_jobs
from ..paths import default_cache_root


@dataclass(frozen=True)
class BuildOptions:
    paths: tuple[str, ...] = ()
    config: str | None = None
    out: str = "dist"
    site: bool = True
    memory: tuple[str, ...] = ()
    keep_going: bool = False
    force: bool = False
    emit: tuple[str, ...] = ()
    cache_dir: Path | None = None  # None: default_cache_root(); use_cache=False disables it
    use_cache: bool = True
    jobs: int = 0  # worker processes for lint and render (0: $SKILLC_JOBS, else the CPU count)
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    home: Path = field(default_factory=Path.home)


def output_folder(opts: BuildOptions) -> Path:
    """The bundle folder, absolute (a symlinked one: the folder it points to)."""
    out = Path(opts.out)
    if not out.is_absolute():
        out = opts.cwd / out
    out = Path(os.path.abspath(out))
    if out.is_symlink():  # (a deploy folder linked elsewhere) swap the folder it points to, keep the link
        out = Path(os.path.realpath(out))
    return out


def cache_root(opts: BuildOptions) -> Path | None:
    """The build cache's folder (None: ``--no-cache``)."""
    return (opts.cache_dir or default_cache_root(opts.env)) if opts.use_cache else None


def job_count(opts: BuildOptions) -> int:
    """Worker processes: ``opts.jobs``, else ``$SKILLC_JOBS``, else the CPU count (at most 8)."""
    return opts.jobs or default_jobs(dict(opts.env))


__all__ = ["BuildOptions", "cache_root", "job_count", "output_folder"]
