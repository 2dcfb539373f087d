"""What ``skillc build`` starts before it imports its stages: the docs site's mkdocs child and seed.

The stages take 0.2-0.3 s to import (``build.pipeline``, a quarter of a rebuild at 1,000 skills),
on one core.  The mkdocs child (``emit.docsite.start_mkdocs``: a process that imports mkdocs, the
theme and the Markdown extensions, ≈ 0.3 s, then waits for the site's command) is started here, so
its imports use the other core meanwhile instead of the stages' (a steady rebuild at 1,000 skills:
0.817 and 0.844 s against 0.874 and 0.897 s, 8 pairs each).  When the generation the build will recycle has no docs site (a bundle's first rebuilds, or the
build before last ran with ``--no-site``), that site is seeded (``emit.docsite.seed``): every folder
and hard link of the kept site, 3,100 at 1,000 skills, on a file system where a folder can cost
100-200 µs of system time.  Forked here, before those imports, the seed has them to finish in as
well as the stages before the site, on the other core; forked after them it was still running when
the site wanted it, and slowed the site's mkdocs on the shared cores.

Neither writes into the bundle.  Nothing is written here but the seed's folder, ``<work>/<name>.tmp-<pid>-seed`` in the work area
beside the output, and only where that area already exists and a site build into this output left
its kept site in the cache: an output skillc never built is seeded nothing, and the checks of the
output folder (``pipeline._plan``) come before any other write as before.  The folder is removed
when the build ends, whatever way; ``output.clean_stale`` removes a killed build's and spares this
process's own (the seed starts before the build takes its lock).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..archive import read_source_date_epoch
from ..emit.docsite import site_engine, start_mkdocs, stop_mkdocs
from ..emit.docsite.seed import seed_site, seed_source
from ..emit.staging import Seed
from ..errors import ConfigError, SkillcError
from ..layout import WORK_DIR
from ..parallel import fork_call
from .options import BuildOptions, cache_root, job_count, output_folder


@dataclass(frozen=True)
class HeadStart:
    """What a build started before its stages: ``seed`` waits for the seeded site and returns it
    (None: it failed), None when nothing is seeded; ``mkdocs``, the site's mkdocs child, None when
    the build makes no mkdocs site (and then nothing is seeded either)."""
    seed: Callable[[], Seed | None] | None = None
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
    """The seed and the mkdocs child started now where the build will want them; both stopped, and
    the seed's folder removed, when the block ends (whatever way: the child has written nothing
    unless the site gave it its command, and then it has ended)."""
    try:
        epoch = read_source_date_epoch(opts.env)
    except SkillcError:  # (the plan reports it, and the build ends there)
        epoch, wanted = None, False
    else:
        wanted = wants_mkdocs(opts)
    if not wanted:  # (no mkdocs site: neither is wanted)
        yield HeadStart()
        return
    with ExitStack() as stack:
        seed = _started_seed(opts, stack)
        child = start_mkdocs(int(epoch or 0))
        stack.callback(stop_mkdocs, child)
        yield HeadStart(seed, child)


def _started_seed(opts: BuildOptions, stack: ExitStack) -> Callable[[], Seed | None] | None:
    """The seed forked now when the build will want it (``seed_source``: the kept site, and no site in
    the generation it will recycle); returns the function that waits for it."""
    state, folder = _seed_plan(opts)
    try:
        forked = None if state is None else fork_call(lambda: seed_site(state, folder), job_count(opts))
    except OSError:  # (no process to spare: only slower, the site links its files itself)
        forked = None
    if forked is None:
        return None
    stack.callback(shutil.rmtree, folder, ignore_errors=True)
    stack.callback(forked.cancel)  # (first: the process is gone before its folder is removed)

    def wait() -> Seed | None:
        try:
            return Seed(folder, forked.result())
        except Exception:  # noqa: BLE001 - only a shortcut: without it the site links its files itself
            return None

    return wait


def _seed_plan(opts: BuildOptions) -> tuple[Path | None, Path]:
    """The kept site to seed from (None: no seed) and the folder to seed into."""
    try:
        out = output_folder(opts)
        work, root = out.parent / WORK_DIR, cache_root(opts)
        folder = work / f"{out.name}.tmp-{os.getpid()}-seed"
        if root is None or not work.is_dir():
            return None, folder
        return seed_source(root / "emit", out, work / f"{out.name}.prev"), folder
    except OSError:  # (an output path the build's own checks will report)
        return None, Path()


__all__ = ["HeadStart", "head_start", "wants_mkdocs"]
