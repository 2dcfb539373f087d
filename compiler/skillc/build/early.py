"""What ``skillc build`` starts before it imports its stages: the docs site's mkdocs child.

The stages take 0.2-0.3 s to import (``build.pipeline``, a quarter of a rebuild at 1,000 skills),
on one core.  The mkdocs child (``emit.docsite.start_mkdocs``: a process that imports mkdocs, the
theme and the Markdown extensions, ≈ 0.3 s, then waits for the site's command) is started here, so
its imports use the other core meanwhile instead of the stages' (a steady rebuild at 1,000 skills:
0.817 and 0.844 s against 0.874 and 0.897 s, 8 pairs each).  It writes nothing until the site gives
it its command, and is stopped when the build ends, whatever way.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..archive import read_source_date_epoch
from ..emit.docsite import site_engine, start_mkdocs, stop_mkdocs
from ..errors import ConfigError, SkillcError
from .options import BuildOptions


@dataclass(frozen=True)
class HeadStart:
    """What a build started before its stages: ``mkdocs``, the site's mkdocs child, None when the
    build makes no mkdocs site."""
    mkdocs: subprocess.Popen | None = None


def wants_mkdocs(opts: BuildOptions) -> bool:
    """Whether the build makes the mkdocs site, as ``emit.site`` will decide (``--no-site``,
    ``$SKILLC_SITE``, the ``site`` extra installed); a misspelt ``$SKILLC_SITE`` is reported by the
    site emitter in its turn, so here it only means no."""
    try:
        return opts.site and site_engine() == "mkdocs"
    except ConfigError:
        return False


@contextmanager
def head_start(opts: BuildOptions) -> Iterator[HeadStart]:
    """The mkdocs child started now where the build will want it; stopped when the block ends
    (whatever way: it has written nothing unless the site gave it its command, and then it has ended)."""
    try:
        epoch = read_source_date_epoch(opts.env)
    except SkillcError:  # (the plan reports it, and the build ends there)
        epoch, wanted = None, False
    else:
        wanted = wants_mkdocs(opts)
    if not wanted:
        yield HeadStart()
        return
    child = start_mkdocs(int(epoch or 0))
    try:
        yield HeadStart(child)
    finally:
        stop_mkdocs(child)


__all__ = ["HeadStart", "head_start", "wants_mkdocs"]
