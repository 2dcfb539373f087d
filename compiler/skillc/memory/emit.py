"""The bundle emitter: ``api/memory/`` (registered in ``skillc.emit.EMITTERS`` as ``memory``).

Inputs: ``ctx.memory_paths`` (``--memory PATH…``) plus the ``memory/`` folder at the root of each
local (filesystem or embedded) repository; settings from the ``[memory]`` table of the build's
configuration file; the skills whose frontmatter opts into ``skill-memory``.  Writes (only when
there is at least one memory file)::

    api/memory/snapshot.json     api/memory/snapshot.sqlite     api/memory/prompt.md
    api/memory/skills/<quote(id, safe='')>.md    the <skill-memory> block of each opted-in skill

``ctx.options.keep_going`` skips or repairs bad entries instead of
failing the build.  The folder is created fresh (any recycled copy is unlinked first, never written
through), and nothing is written elsewhere.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..discover.walk import path_key
from ..resolve_types import EmitContext
from .load import memory_files

if TYPE_CHECKING:
    from .settings import MemorySettings

# (the rest of the memory stage, and Jinja through its renderer, is imported only by a build that
# has memory files: most builds have none, and their start-up need not pay for it)

MEMORY_DIR = "api/memory"


def memory_inputs(ctx: EmitContext) -> list[Path]:
    paths = [Path(p) for p in ctx.memory_paths]
    seen = {p.resolve() for p in paths}
    repos = {s.repository.name: s.repository for s in ctx.resolution.skills}
    for repo in sorted(repos.values(), key=lambda r: (r.order, path_key(r.name))):
        if repo.type not in ("filesystem", "embedded"):
            continue
        folder = Path(repo.location) / "memory"
        if folder.is_dir() and not folder.is_symlink() and folder.resolve() not in seen:
            seen.add(folder.resolve())
            paths.append(folder)
    return paths


def _settings(ctx: EmitContext) -> MemorySettings:
    from ..config.files import read_config_file
    from .settings import MemorySettings, settings_from_config

    for entry in ctx.options.config_files:
        path = Path(entry[0] if isinstance(entry, (tuple, list)) else entry)
        if path.is_file() and path.suffix == ".toml":
            cfg = read_config_file(path)
            if "memory" in cfg.data:
                return settings_from_config(cfg)
    return MemorySettings()


def emit_memory(ctx: EmitContext) -> None:
    paths = memory_inputs(ctx)
    if not any(True for _ in memory_files(paths)):
        return
    from .pipeline import freeze
    from .render import skill_memory_config
    from .snapshot import SkillRef

    settings = _settings(ctx)
    if not settings.enabled:
        return
    skills = []
    for s in ctx.resolution.skills:
        cfg = skill_memory_config(s.document.meta)
        if cfg is not None:
            skills.append(SkillRef(s.id, s.name, cfg))
    target = ctx.out / MEMORY_DIR
    if target.exists() or target.is_symlink():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    report = freeze(paths, target, settings=settings, as_of=ctx.as_of, keep_going=ctx.options.keep_going,
                    skills=skills)
    # What --keep-going skipped or repaired is printed by the build (and in --json "notes"), as by
    # `skillc memory freeze`, besides snapshot.json's diagnostics.
    ctx.collected.notes.extend(f"{p.path}:{p.line}: {p.message}" if p.line else f"{p.path}: {p.message}"
                               for p in report.problems)
