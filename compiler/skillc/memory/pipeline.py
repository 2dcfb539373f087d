"""The memory stages end to end: load → redact → consolidate → write (used by the CLI and the build)."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..archive import MAX_SOURCE_DATE_EPOCH, read_source_date_epoch
from ..discover.walk import discover
from ..errors import BuildError, SkillcError
from ..model import ItemKind
from ..validate.lint import read_item
from .load import LoadResult, Problem, load_paths
from .model import MemoryEntry, iso
from .render import skill_memory_config
from .settings import MemorySettings
from .snapshot import SkillRef, Snapshot, prepare, write


class MemoryInputError(BuildError):
    """Memory files have problems (exit 1); ``problems`` lists every one with file and line."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        n = len(problems)
        first = f"; the first: {problems[0]}" if n > 1 else (f": {problems[0]}" if n else "")
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in the memory files{first}",
                         hint="fix the entries, or pass --keep-going to skip or repair them")
        self.problems = tuple(problems)


class SecretsFound(BuildError):
    def __init__(self, count: int, entries: int) -> None:
        super().__init__(f"{count} likely secret(s) in {entries} memory entr{'y' if entries == 1 else 'ies'} "
                         "(--fail-on-secret)", hint="remove them from the memory files; the audit names each entry")


def default_as_of() -> float:
    epoch = read_source_date_epoch()
    return float(int(time.time()) if epoch is None else epoch)


def parse_as_of(text: str | None) -> float:
    """``--as-of``: ISO 8601 (date or date-time; UTC when no offset) or seconds since the epoch."""
    if not text:
        return default_as_of()
    t = text.strip()
    try:
        if t.isdigit():
            seconds = float(int(t))
        else:
            dt = _dt.datetime.fromisoformat(t)
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=_dt.UTC)
            seconds = float(int(dt.timestamp()))
        if not 0 <= seconds <= MAX_SOURCE_DATE_EPOCH:
            raise ValueError("out of range")
        iso(seconds)  # (a time the snapshot can write)
    except (ValueError, OverflowError):
        raise SkillcError(f"--as-of {text!r} is not a date from 1970 to 9999 (use 2026-03-01, 2026-03-01T12:00:00Z "
                          "or epoch seconds)") from None
    return seconds


def load(paths: Iterable[Path], *, as_of: float, keep_going: bool) -> LoadResult:
    result = load_paths(list(paths), default_time=iso(as_of), keep_going=keep_going)
    if result.errors:
        raise MemoryInputError(result.errors)
    return result


def opted_in_skills(root: Path) -> list[SkillRef]:
    """Skills under ``root`` whose frontmatter has ``skill-memory: {enabled: true}``."""
    found = []
    for item in discover(root).items:
        if item.kind != ItemKind.SKILL:
            continue
        doc = read_item(str(root), item)
        cfg = skill_memory_config(doc.meta)
        if cfg is None:
            continue
        name = doc.meta.get("name") if isinstance(doc.meta.get("name"), str) else item.skill_dir.rsplit("/", 1)[-1]
        found.append(SkillRef(item.skill_dir, name, cfg))
    return found


@dataclass(frozen=True, slots=True)
class FreezeReport:
    snapshot: Snapshot
    problems: tuple[Problem, ...]
    written: tuple[str, ...]


def freeze_entries(entries: Sequence[MemoryEntry], out: Path, *, settings: MemorySettings, as_of: float,
                   problems: Sequence[Problem] = (), files: Sequence[str] = (), skills: Sequence[SkillRef] = (),
                   fail_on_secret: bool = False) -> FreezeReport:
    snap = prepare(entries, settings=settings, as_of=as_of, problems=problems, files=files)
    if fail_on_secret and snap.redactions:
        raise SecretsFound(sum(r.count for r in snap.redactions), len({r.entry for r in snap.redactions}))
    written = write(snap, out, settings=settings, skills=skills)
    return FreezeReport(snap, tuple(problems), tuple(written))


def freeze(paths: Sequence[Path], out: Path, *, settings: MemorySettings, as_of: float, keep_going: bool = False,
           skills: Sequence[SkillRef] = (), fail_on_secret: bool = False) -> FreezeReport:
    loaded = load(paths, as_of=as_of, keep_going=keep_going)
    return freeze_entries(loaded.entries, out, settings=settings, as_of=as_of, problems=loaded.problems,
                          files=loaded.files, skills=skills, fail_on_secret=fail_on_secret)
