"""Per-skill bundle files: the wire document, the supporting files and the zip of every skill.

For each winning skill:

* ``api/skills/<quote(id, safe='')>`` and the same bytes as ``….json``: the ``WireSkillDocument``;
* ``api/files/<id>/<path>``: every file of the skill (SKILL.md and its references/, scripts/,
  assets/…), byte for byte, except files withheld because a path is unsafe to publish or the file
  holds a likely secret (listed in the manifest);
* ``api/archives/<id>.zip``: the skill as a Claude-compatible zip (nested by ID, so the URL needs no
  escaped slash a static host would decode) holding the published files (package_skill.py's
  exclusions applied), deflated at zlib's default level, already-compressed formats stored.
* ``api/discovery/<id>.zip``: the same files with the skill folder's content at the archive's root
  (``SKILL.md`` at the top): the ``archive`` artifact of the agentskills.io discovery index, which
  ``npx skills`` installs only from such a zip (a top folder there hides its SKILL.md).

Each source file is read once: checked against the hash it was listed with, scanned, written and
zipped from memory (the zip is written directly: the staging folder is private to the build).

What a skill produced is remembered in the render cache under a key covering everything it depends
on, so an unchanged skill is not rendered again: its files are kept or hard-linked (see
``staging``).  The records go into ``ctx.collected.artifacts`` for the well-known index and the
manifest.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # json.dumps(ensure_ascii=False)'s string quoting

from .. import secrets
from ..activecontent import REASON as ACTIVE_REASON
from ..activecontent import runs_as_document
from ..archive import (
    CREDENTIAL_NAMES,
    JUNK_PREFIXES,
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    Limits,
    bomb_like,
    excluded,
    git_layout_folders,
    zip_time,
)
from ..errors import BuildError
from ..gate import credential_content
from ..resolve_types import EmitContext, SkillFile, SourceSkill
from .common import compact_json, encode_id, sha256_hex, wire_body, wire_descriptor
from .staging import Staging

# Agent Skills discovery path rules: printable ASCII without \ ? # [ ], no empty/./.. segment.
_SAFE_PATH = re.compile(r"[\x20-\x7e]+")
_FORBIDDEN = set('\\?#[]')
# Names `import` refuses (Windows cannot hold them): never in the bundle, whose archives must import.
_NOT_IMPORTABLE = set(':*"<>|')
ZIP_LEVEL = 6  # zlib's default (9 gave the same bytes and time on Markdown skills; it is slower on larger files)
# Formats that are compressed already: stored, not deflated again.
COMPRESSED_SUFFIXES = (".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".jar", ".whl", ".png", ".jpg",
                       ".jpeg", ".gif", ".webp", ".avif", ".woff", ".woff2", ".mp3", ".mp4", ".ogg", ".webm")

@dataclass(frozen=True, slots=True)
class SkillArtifacts:
    """What one skill put in the bundle (all paths relative to the bundle root)."""

    id: str
    document: tuple[str, str, int]  # (path, sha256, size) of api/skills/<enc>
    files: tuple[tuple[str, str, int], ...]  # (path relative to the skill, sha256, size), published
    archive: tuple[str, str, int] | None  # the zip
    withheld: tuple[tuple[str, str], ...]  # (path, reason) not published
    descriptor: str = ""  # the WireSkillDescriptor as compact JSON (api/skills.json is their list)
    index_row: str = ""  # (unused since the discovery index names skills by flat name: emit.wellknown)
    rooted: tuple[str, str, int] | None = None  # api/discovery/<id>.zip: the discovery index's artifact
    rooted_files: tuple[str, ...] = ()  # the paths it holds (the skill's published files less the excluded)

    def bundle_files(self) -> list[tuple[str, str, int]]:
        doc_path, sha, size = self.document
        out = [self.document, (doc_path + ".json", sha, size)]
        out.extend((f"api/files/{self.id}/{p}", s, n) for p, s, n in self.files)
        if self.archive:
            out.append(self.archive)
        if self.rooted:
            out.append(self.rooted)
        return out

    def to_record(self) -> tuple:
        return (self.id, self.document, self.files, self.archive, self.withheld, self.descriptor, self.index_row,
                self.rooted, self.rooted_files)

    @classmethod
    def from_record(cls, rec: tuple) -> SkillArtifacts | None:
        """The artifacts a cache record holds (None: a record of an older layout, rendered again)."""
        return cls(*rec) if len(rec) == len(cls.__slots__) else None


def publishable(path: str) -> str | None:
    """Why ``path`` (relative to a skill) cannot be published, or None."""
    if not _SAFE_PATH.fullmatch(path) or any(c in _FORBIDDEN for c in path):
        return "path is not printable ASCII without \\ ? # [ ]"
    if any(c in _NOT_IMPORTABLE for c in path):
        return "path holds one of : * \" < > | (Windows cannot hold it; import refuses it)"
    if path.startswith("/") or any(seg in ("", ".", "..") for seg in path.split("/")):
        return "path has an empty, '.' or '..' segment"
    if any(len(seg) > MAX_NAME_BYTES for seg in path.split("/")):
        return f"a name over {MAX_NAME_BYTES} bytes (import refuses it)"
    if CREDENTIAL_NAMES.search(path):
        return "credential file (never published)"
    if path.rsplit("/", 1)[-1].lower() == ".git":
        # (a submodule's pointer: `gitdir: …` names a folder whose config git, run where a client
        # unpacks the skill, would read, and it can run commands; import skips it, pack leaves it out)
        return "a .git file (git would follow it); not published"
    found = secrets.scan(path)
    if found:
        return f"the path holds a likely secret ({found[0].kind}); not published"
    return None


def _secret_in(path: str, data: bytes) -> str | None:
    """Why a supporting file is withheld for what it holds.  Text was redacted by the publishing
    gate (``skillc.gate``); what is still found is in a binary file, or a credential file by content.
    Every finding is listed (kind and line, never the value): the manifest is the audit."""
    kind = credential_content(path, data)
    if kind is not None:
        return f"credential file ({kind}); never published"
    found = secrets.scan_bytes(data, strict=True)  # (any size, binary too: nothing unscanned is published)
    if found:
        listed = ", ".join(f"{m.kind} at line {m.line}" for m in found[:20])
        return f"likely secret ({listed}{', …' if len(found) > 20 else ''}); not published"
    return None


def _read(path: str, expected: SkillFile) -> tuple[bytes, bool]:
    """A source file's bytes (checked against the hash it was listed with) and the executable bit it
    was listed with."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            chunks = []
            while chunk := os.read(fd, max(expected.size + 1, 1 << 16)):
                chunks.append(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise BuildError(f"{path}: cannot read ({exc.strerror or exc}) while publishing it") from None
    data = b"".join(chunks)
    if len(data) != expected.size or hashlib.sha256(data).hexdigest() != expected.sha256:
        raise BuildError(f"{path} changed while the build was reading it; build again")
    return data, expected.executable  # (the bit it was listed with: the one the cache keys cover)


def _main_bytes(skill: SourceSkill, f: SkillFile) -> tuple[bytes, bool]:
    """SKILL.md's bytes from the parsed document when they hash the same (no second read), else read."""
    try:
        data = skill.document.text.encode("utf-8")
    except UnicodeEncodeError:
        return _read(f.source_path, f)
    if len(data) == f.size and hashlib.sha256(data).hexdigest() == f.sha256:
        return data, f.executable
    return _read(f.source_path, f)


def skill_zip(members: list[tuple[str, bytes, bool]], epoch: int) -> bytes:
    """A deterministic zip of ``(archive name, bytes, executable)``: byte-ordered entries, fixed
    times, deflate at ``ZIP_LEVEL`` (stored for formats that are compressed already).

    Written directly: the same bytes ``zipfile`` writes for these entries into a seekable file
    (``zipfile_skill_zip``, the reference a test compares against), at a third of its cost per skill.
    Members near zip64 sizes go through ``zipfile``."""
    if len(members) >= 0xFFFF or sum(len(m[1]) for m in members) >= _SMALL_ZIP:
        return zipfile_skill_zip(members, epoch)
    y, mo, d, h, mi, sec = zip_time(epoch)
    dosdate, dostime = (y - 1980) << 9 | mo << 5 | d, h << 11 | mi << 5 | sec // 2
    local, central = [], []
    offset = 0
    for name, data, executable in sorted(members, key=lambda m: m[0].encode("utf-8", "surrogateescape")):
        try:
            raw_name, flags = name.encode("ascii"), 0
        except UnicodeEncodeError:
            raw_name, flags = name.encode("utf-8"), 0x800
        if name.lower().endswith(COMPRESSED_SUFFIXES):
            method, packed = 0, data
        else:
            # A window just big enough for the member (its length plus zlib's 262-byte lookahead;
            # zlib's minimum is 2**9) gives the same deflate stream as the 32 KiB default, and
            # setting up the smaller window costs a third less on the few-KB files skills hold.
            c = zlib.compressobj(ZIP_LEVEL, zlib.DEFLATED, -min(15, max(9, (len(data) + 262).bit_length())))
            method, packed = 8, c.compress(data) + c.flush()
            if bomb_like(len(data), len(packed)):  # (stored: import refuses such a ratio as a zip bomb)
                method, packed = 0, data
        crc = zlib.crc32(data)
        mode = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        local.append(_LOCAL.pack(b"PK\x03\x04", 20, 0, flags, method, dostime, dosdate, crc, len(packed), len(data),
                                 len(raw_name), 0) + raw_name)
        local.append(packed)
        central.append(_CENTRAL.pack(b"PK\x01\x02", 20, 3, 20, 0, flags, method, dostime, dosdate, crc, len(packed),
                                     len(data), len(raw_name), 0, 0, 0, 0, mode, offset) + raw_name)
        offset += _LOCAL.size + len(raw_name) + len(packed)
    directory = b"".join(central)
    end = _END.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), offset, 0)
    return b"".join(local) + directory + end


_LOCAL = struct.Struct("<4s2B4HL2L2H")  # zipfile.structFileHeader
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # zipfile.structCentralDir
_END = struct.Struct("<4s4H2LH")  # zipfile.structEndArchive
_SMALL_ZIP = 1 << 30  # far below zip64's 2 GiB limits


def zipfile_skill_zip(members: list[tuple[str, bytes, bool]], epoch: int) -> bytes:
    """``skill_zip`` through ``zipfile`` (large members, and the reference its bytes are tested against)."""
    stamp = zip_time(epoch)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, executable in sorted(members, key=lambda m: m[0].encode("utf-8", "surrogateescape")):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3
            info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            if name.lower().endswith(COMPRESSED_SUFFIXES) or _bomb_like_deflated(data):
                info.compress_type = zipfile.ZIP_STORED
                zf.writestr(info, data)
            else:
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data, compresslevel=ZIP_LEVEL)
    return buf.getvalue()


def _bomb_like_deflated(data: bytes) -> bool:
    if len(data) <= Limits().ratio_floor_bytes:  # (below it check_zip looks at no ratio)
        return False
    c = zlib.compressobj(ZIP_LEVEL, zlib.DEFLATED, -15)
    return bomb_like(len(data), len(c.compress(data)) + len(c.flush()))


def document_bytes(descriptor_json: str, body: str) -> bytes:
    """``json_bytes({**descriptor, "body": body})`` from the descriptor's compact JSON: ``body`` sorts
    before every descriptor key, so the document is the descriptor with one member put in front."""
    return f'{{"body":{encode_basestring(body)},{descriptor_json[1:]}\n'.encode()


def planned_paths(skill: SourceSkill) -> list[str]:
    """The bundle paths ``render_skill`` may write for ``skill`` (to make their folders first)."""
    paths = [f"api/skills/{encode_id(skill.id)}", f"api/archives/{skill.id}.zip", f"api/discovery/{skill.id}.zip"]
    paths.extend(f"api/files/{skill.id}/{f.path}" for i, f in enumerate(skill.files)
                 if i == 0 or publishable(f.path) is None)
    return paths


# IDs whose api/skills/<id> the bundle writes itself (the lists emitter's page inside api/skills/).
RESERVED_IDS = frozenset({"index.html"})


def bundle_collisions(skills: Sequence[SourceSkill]) -> list[tuple[str, str, str]]:
    """``(id, other id or "", bundle path)`` for each skill whose planned files meet another
    skill's (the same path, or a file where the other needs a folder) or a path the bundle keeps
    for itself (other ``""``).  Skills from different repositories can meet this way.

    Only IDs that are related can meet (each skill writes below ``api/files/<id>/``, plus
    ``api/archives/<id>.zip`` and ``api/skills/<encoded id>`` with its ``.json`` twin): one inside
    the other (``a`` and ``a/b``), inside an archive's name (``a`` and ``a.zip/x``), or an ID that
    is another's twin (``foo.json``), so a 10,000-skill build compares a few pairs, not every path;
    and each skill's paths are planned once, however many skills nest inside it."""
    by_id = {s.id: s for s in skills}
    layouts: dict[str, _Layout] = {}

    def layout(skill: SourceSkill) -> _Layout:
        found = layouts.get(skill.id)
        if found is None:
            found = layouts[skill.id] = _Layout(planned_paths(skill))
        return found

    found: list[tuple[str, str, str]] = []
    for skill in skills:
        if skill.id in RESERVED_IDS:  # (it encodes to itself)
            found.append((skill.id, "", f"api/skills/{skill.id}"))
        if skill.id.endswith(".json") and skill.id[:-5] in by_id:
            found.append((skill.id, skill.id[:-5], f"api/skills/{encode_id(skill.id)}"))
        cut = skill.id.find("/")
        while cut > 0:
            above = skill.id[:cut]
            if above in by_id:
                found.extend((skill.id, above, path) for path in layout(by_id[above]).meets(layout(skill)))
            if above.endswith(".zip") and above[:-4] in by_id:
                found.append((skill.id, above[:-4], f"api/archives/{above}"))
            cut = skill.id.find("/", cut + 1)
    return found


class _Layout:
    """A skill's planned bundle paths, and the folders they need."""

    __slots__ = ("dirs", "paths", "order")

    def __init__(self, planned: list[str]) -> None:
        self.order = planned
        self.paths = set(planned)
        self.dirs: set[str] = set()
        for path in planned:
            cut = path.rfind("/")
            while cut > 0 and path[:cut] not in self.dirs:
                self.dirs.add(path[:cut])
                cut = path.rfind("/", 0, cut)

    def meets(self, inner: _Layout) -> list[str]:
        """Where ``inner``'s files meet these: the same path, a file of one where the other needs a
        folder (each place once, in ``inner``'s order)."""
        out: dict[str, None] = {}
        for path in inner.order:
            if path in self.paths or path in self.dirs:  # the same file, or a folder of these here
                out[path] = None
            cut = path.rfind("/")
            while cut > 0:  # a file of these where this path needs a folder
                if path[:cut] in self.paths:
                    out[path[:cut]] = None
                    break
                cut = path.rfind("/", 0, cut)
        return list(out)


def _remove_empty_dirs(staging: Staging, art: SkillArtifacts) -> None:
    """Folders made for files that were withheld after reading (a likely secret) and hold nothing."""
    top = f"api/files/{art.id}"
    for path, _ in art.withheld:
        d = f"{top}/{path}".rpartition("/")[0]
        while d != top:
            try:
                os.rmdir(f"{os.fspath(staging.out)}/{d}")
            except OSError:
                break
            d = d.rpartition("/")[0]


def render_key(ctx: EmitContext, skill: SourceSkill) -> str:
    from ..cache import key_of

    files = tuple((f.path, f.sha256, f.executable) for f in skill.files)
    return key_of("render", skill.id, skill.repository.name, skill.repository.tier.value, files,
                  ctx.options.epoch, ctx.options.render_salt)


def render_skill(ctx: EmitContext, staging: Staging, skill: SourceSkill) -> SkillArtifacts:
    """Write one skill's files: each source file is read once (and checked against its hash), then
    published, scanned and zipped from memory."""
    enc = encode_id(skill.id)
    descriptor = compact_json(wire_descriptor(skill))
    doc = document_bytes(descriptor, wire_body(skill))
    doc_rel = f"api/skills/{enc}"
    staging.write(doc_rel, doc)
    staging.link(doc_rel, doc_rel + ".json")
    published, withheld = [], []
    zipped: list[tuple[str, bytes, bool]] = []
    folder = skill.id.rsplit("/", 1)[-1]
    carried = _Importable(folder)
    # (a folder laid out as a git repository: a client that unpacks it and runs git there, as a shell
    # prompt does on `cd`, reads its config, which can run commands; import refuses such a zip)
    git_folders = tuple(g.lower() + "/" for g in git_layout_folders([f.path for f in skill.files]))
    for i, f in enumerate(skill.files):
        main = i == 0  # SKILL.md (whatever its spelling) is always first
        reason = None if main else publishable(f.path) or carried.refusal(f)
        if reason is None and git_folders and f.path.lower().startswith(git_folders):
            reason = "in a folder laid out as a git repository (HEAD, objects/, refs/); not published"
        if reason is not None:
            withheld.append((secrets.redact(f.path)[0], reason))  # (the manifest lists it: never a secret)
            continue
        data, executable = _main_bytes(skill, f) if main else _read(f.source_path, f)
        if not main:
            reason = _secret_in(f.path, data)
            if reason is not None:
                withheld.append((f.path, reason))
                continue
        if not main and runs_as_document(f.path):  # (never a page of the site's origin: see activecontent)
            withheld.append((f.path, ACTIVE_REASON))
        else:
            staging.write(f"api/files/{skill.id}/{f.path}", data)
            published.append((f.path, f.sha256, f.size))
        carried.take("SKILL.md" if main else f.path, f.size)
        if main:
            zipped.append(("SKILL.md", data, executable))
        elif not excluded(f.path):
            zipped.append((f.path, data, executable))
    archive = rooted = None
    epoch = ctx.options.epoch
    # (a skill folder named __MACOSX: import skips it as Finder's junk, so its archive would import empty)
    if ctx.options.archives and not f"{folder}/".startswith(JUNK_PREFIXES):
        archive = _write_zip(staging, f"api/archives/{skill.id}.zip",
                             [(f"{folder}/{name}", data, x) for name, data, x in zipped], epoch)
    if ctx.options.archives:
        rooted = _write_zip(staging, f"api/discovery/{skill.id}.zip", zipped, epoch)
    files = tuple(published)
    # (the index lists the files a client can also fetch one by one: not those kept in the zip only)
    zip_only = {path for path, reason in withheld if reason == ACTIVE_REASON}
    return SkillArtifacts(skill.id, (doc_rel, sha256_hex(doc), len(doc)), files, archive, tuple(withheld),
                          descriptor, "", rooted, tuple(sorted(name for name, _, _ in zipped if name not in zip_only)))


def _write_zip(staging: Staging, rel: str, members: list[tuple[str, bytes, bool]], epoch: int) -> tuple[str, str, int]:
    data = skill_zip(members, epoch)
    staging.write(rel, data)
    return (rel, sha256_hex(data), len(data))


class _Importable:
    """What ``skillc import`` would accept of a skill's archive, file by file: its limits on a file,
    the entry count and the total size (``archive.Limits``), the length of an entry's name with the
    archive's top folder, and names that differ only by case from one taken before (macOS and
    Windows would merge them)."""

    def __init__(self, folder: str) -> None:
        self.folder, self.limits = folder, Limits()
        self.spelled: dict[str, str] = {}  # case-folded name -> the one taken
        self.entries = self.total = 0

    def refusal(self, f: SkillFile) -> str | None:
        limits = self.limits
        if f.size > limits.max_file_bytes:
            return f"file of {f.size:,} bytes: import takes files up to {limits.max_file_bytes:,}"
        if len(f"{self.folder}/{f.path}".encode()) > MAX_PATH_BYTES:
            return f"its archive entry would be a path over {MAX_PATH_BYTES} bytes (import refuses it)"
        if self.entries + 1 > limits.max_entries:
            return f"the skill's archive would hold more than {limits.max_entries:,} entries (import's limit)"
        if self.total + f.size > limits.max_total_bytes:
            return f"the skill's archive would pass {limits.max_total_bytes:,} bytes (import's limit)"
        for name in _with_folders(f.path):
            other = self.spelled.get(name.casefold(), name)
            if other != name:
                return f"differs only by case from {other!r} (case-insensitive file systems would merge them)"
        return None

    def take(self, path: str, size: int) -> None:
        self.entries += 1
        self.total += size
        for name in _with_folders(path):
            self.spelled.setdefault(name.casefold(), name)


def _with_folders(path: str) -> list[str]:
    """``a/b/c.md`` -> ``["a", "a/b", "a/b/c.md"]``."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _reused(cache, artifacts: dict, art: SkillArtifacts, progress) -> None:
    if cache is not None:
        cache.stats.render_cached += 1
    artifacts[art.id] = art
    if progress is not None:
        progress(1)


class PendingArtifacts(Mapping):
    """``ctx.collected.artifacts`` while the workers still write the skills' files: the first look
    at it waits for them (so an emitter that reads the artifacts always sees all of them), and
    ``cancel()`` stops them (a build that fails meanwhile)."""

    def __init__(self, finish: Callable[[], dict], cancel: Callable[[], None]) -> None:
        self._finish, self._cancel, self._data = finish, cancel, None

    def wait(self) -> dict:
        if self._data is None:
            self._data = self._finish()
        return self._data

    def cancel(self) -> None:
        if self._data is None:
            self._cancel()

    def __getitem__(self, key):
        return self.wait()[key]

    def __iter__(self):
        return iter(self.wait())

    def __len__(self) -> int:
        return len(self.wait())


def emit_skills(ctx: EmitContext) -> None:
    """Write (or reuse) every skill's files; record them in ``ctx.collected.artifacts``.  The
    forked workers may still be writing when this returns: the artifacts are then a
    ``PendingArtifacts`` that waits for them when first read."""
    staging: Staging = ctx.options.staging or Staging(ctx.out)
    cache = ctx.options.cache
    artifacts: dict = {}
    progress = ctx.options.progress
    todo, reuse = [], []
    for skill in ctx.resolution.skills:
        key = render_key(ctx, skill)
        rec = cache.get("render", key) if cache is not None else None
        art = SkillArtifacts.from_record(rec) if rec is not None else None  # type: ignore[arg-type]
        if art is not None and staging.recycling and staging.provide_all(art.bundle_files()):
            _reused(cache, artifacts, art, progress)  # every file still in the recycled generation
        elif art is not None:
            reuse.append((skill, key, art))
        else:
            todo.append((skill, key))
    # Every folder the other skills' files go in, made in one sorted pass (a fresh staging folder has none).
    # The folders of skills to render are made by the workers that render them (a folder costs more
    # than a file to create); the collections' folders, which many skills share, are made here.
    staging.ensure_dirs([p for _, _, art in reuse for p, _, _ in art.bundle_files()]
                        + [f"{top}/{skill.id}" for skill, _ in todo for top in ("api/files", "api/archives", "api/discovery")]
                        + (["api/skills/"] if todo else []))
    # Linking the rest from the visible bundle (the first rebuild after a full build: every file)
    # or rendering them is independent per skill: forked workers do it and return what they made
    # (None: linked), while the build goes on with the search index.
    from ..parallel import fork_map_async

    jobs = ctx.options.jobs or 1
    if reuse:
        staging.current_entries()  # read once, before the workers fork
    work = reuse + [(skill, key, None) for skill, key in todo]

    def produce(entry: tuple[SourceSkill, str, SkillArtifacts | None]) -> SkillArtifacts | None:
        skill, _, art = entry
        if art is not None and staging.provide_all(art.bundle_files()):
            return None
        if art is None:
            staging.ensure_dirs(planned_paths(skill), below=f"api/files/{skill.id}")
        return render_skill(ctx, staging, skill)

    pending = fork_map_async(produce, work, jobs, progress)

    def finish() -> dict:
        for (skill, key, old), art in zip(work, pending.result()):
            if art is None:
                _reused(cache, artifacts, old, None)  # type: ignore[arg-type]
                continue
            if cache is not None:
                cache.stats.rendered += 1
                cache.put("render", key, art.to_record())
            if art.withheld:
                _remove_empty_dirs(staging, art)
            artifacts[skill.id] = art
        # Deterministic order whatever was reused or rendered.
        return {s.id: artifacts[s.id] for s in ctx.resolution.skills}

    ctx.collected.artifacts = PendingArtifacts(finish, pending.cancel) if work else finish()
