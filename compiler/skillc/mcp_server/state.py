"""The bundle a running server answers from, kept current.

A local bundle is opened again when ``skillc build`` replaced it (the manifest's inode, size or
modification time changed: a build swaps a new folder in); a served one revalidates its manifest
every ``ttl`` seconds (``Bundle``'s own cache).  Each answer reads one ``Snapshot``: the bundle and
what the server derives from it (skill places, served SKILL.md files), derived lazily, so a server
starts without reading a skill.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..bundle import Bundle
from .catalog import (
    SKILL_FILE,
    ServedFile,
    ServedSkillFile,
    SkillPlace,
    place_skills,
    served_files,
    served_skill_file,
    skill_file_of,
)


@dataclass(frozen=True, slots=True)
class ServedSkill:
    place: SkillPlace
    skill_file: ServedSkillFile
    published_skill_file: str | None  # the published file's path (SKILL.md or skill.md), if any
    files: tuple[ServedFile, ...]


class Snapshot:
    """One deployment of a bundle and what the server derives from it."""

    def __init__(self, bundle: Bundle, manifest: object):
        self.bundle = bundle
        self.manifest = manifest
        self._places: dict[str, SkillPlace] | None = None
        self._by_path: dict[str, SkillPlace] | None = None
        self._served: dict[str, ServedSkill] = {}
        self._lock = threading.Lock()

    @property
    def places(self) -> dict[str, SkillPlace]:
        if self._places is None:
            self._places = place_skills(s.id for s in self.bundle.skills())
        return self._places

    @property
    def by_path(self) -> dict[str, SkillPlace]:
        if self._by_path is None:
            self._by_path = {p.path: p for p in self.places.values()}
        return self._by_path

    def served(self, skill_id: str) -> ServedSkill:
        hit = self._served.get(skill_id)
        if hit is not None:
            return hit
        b = self.bundle
        place = self.places[skill_id]
        files = b.files(skill_id)
        published = skill_file_of(files)
        raw = b.read_file(skill_id, published.path) if published is not None else None
        doc = b.get(skill_id)
        skill_file = served_skill_file(raw, published.sha256 if published is not None and published.path == SKILL_FILE
                                       else None, place.name, doc.description, doc.body)
        served = ServedSkill(place, skill_file, published.path if published is not None else None,
                             tuple(served_files(files, skill_file)))
        with self._lock:
            self._served[skill_id] = served
        return served

    def read(self, skill_id: str, path: str) -> bytes:
        """A served file's bytes (SKILL.md as served, every other file as published)."""
        served = self.served(skill_id)
        if path == SKILL_FILE:
            if served.skill_file.content is not None:
                return served.skill_file.content
            return self.bundle.read_file(skill_id, served.published_skill_file or SKILL_FILE)
        return self.bundle.read_file(skill_id, path)


class BundleSource:
    """Opens the bundle once and again whenever it changed; ``current()`` is the snapshot to answer from."""

    def __init__(self, location: str, ttl: float):
        self.location = location
        self.ttl = ttl
        self.remote = location.startswith(("http://", "https://"))
        self._snapshot: Snapshot | None = None
        self._stamp: tuple | None = None
        self._lock = threading.Lock()

    def _manifest_stamp(self) -> tuple | None:
        for api in (Path(self.location) / "api", Path(self.location)):
            try:
                st = os.stat(api / "manifest.json")
            except OSError:
                continue
            return st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns
        return None

    def check(self) -> None:
        """Fail now, with the reader's one-line error, on what is not a bundle.  A local bundle whose
        manifest is there is opened on the first request that reads it (its manifest of a 10,000-skill
        bundle is a few megabytes: the server answers ``initialize`` and ``tools/list`` without it)."""
        if self.remote or self._manifest_stamp() is None:
            self.current()

    def current(self) -> Snapshot:
        with self._lock:
            if self.remote:
                if self._snapshot is None:
                    bundle = Bundle.open(self.location, ttl=self.ttl)
                    self._snapshot = Snapshot(bundle, bundle.manifest())
                manifest = self._snapshot.bundle.manifest()  # (revalidated once ttl has passed)
                if manifest is not self._snapshot.manifest:
                    self._snapshot = Snapshot(self._snapshot.bundle, manifest)
                return self._snapshot
            stamp = self._manifest_stamp()
            if self._snapshot is None or stamp != self._stamp:
                bundle = Bundle.open(self.location)
                self._snapshot, self._stamp = Snapshot(bundle, bundle.manifest()), stamp
            return self._snapshot
