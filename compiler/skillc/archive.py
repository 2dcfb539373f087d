"""Safe zip archives: deterministic writing of Claude-compatible skill zips, hostile-proof reading.

Writing (``write_skill_zip``, ``write_zip``): one top-level folder per skill, named after the skill
directory, with ``SKILL.md`` directly inside (what Claude.ai and the Claude API accept);
package_skill.py's exclusions (``__pycache__``, ``node_modules``, ``*.pyc``, ``.DS_Store``, a root
``evals/``); entries sorted by byte order, every timestamp ``SOURCE_DATE_EPOCH`` (or 1980-01-01),
permissions 0644 (0755 for executables), deflate, written to a temporary file and renamed.

Reading (``check_zip`` then ``extract_zip``): every entry is checked before a byte is written:
no absolute path, drive letter, ``..``, backslash or control character; no symlink or device; no
encrypted entry; no duplicate (also case-insensitive) and no file/folder clash; caps on the number
of entries, each file's size, the total size and the compression ratio (zip bombs).  Extraction
counts the bytes it really inflates (headers can lie), refuses to follow anything, and writes only
below a fresh destination directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import time
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

from .discover.walk import SKIP_DIRS
from .errors import SkillcError, writing
from .resolve_types import SourceSkill

ZIP_EPOCH_MIN = 315532800  # 1980-01-01T00:00:00Z, the earliest time a zip can store
EXCLUDE_DIRS = frozenset({"__pycache__", "node_modules"})
EXCLUDE_GLOBS = ("*.pyc",)
EXCLUDE_FILES = frozenset({".DS_Store"})
ROOT_EXCLUDE_DIRS = frozenset({"evals"})
JUNK_PREFIXES = ("__MACOSX/",)  # Finder's resource forks: skipped on import, never written
# Entries below the folders discovery skips are skipped too (check_zip), spelled as discovery spells
# them (it never skips `Build/`); VCS folders in any case: on a case-insensitive file system `.GIT/`
# is `.git/`, whose config can run commands in the next `git status`.
_VCS_DIRS = frozenset({".git", ".hg", ".svn"})
MAX_NAME_BYTES = 255  # one path segment (Linux, macOS and Windows all stop here)
MAX_PATH_BYTES = 1024  # a whole entry name: room left for the folder it is extracted into
_WINDOWS_BAD = re.compile(r'[\x00-\x1f\x7f\\:*?"<>|]')


class ArchiveError(SkillcError):
    """A zip archive is unsafe or malformed (exit 1: the input fails)."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Limits:
    max_entries: int = 10_000
    max_file_bytes: int = 64 * 1024 * 1024
    max_total_bytes: int = 512 * 1024 * 1024
    max_ratio: int = 200  # uncompressed / compressed, checked for files over 1 MiB
    ratio_floor_bytes: int = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ZipEntry:
    name: str  # posix path inside the archive (validated)
    size: int
    compressed: int
    executable: bool
    info: zipfile.ZipInfo


@dataclass(frozen=True, slots=True)
class ZipListing:
    path: Path
    sha256: str
    entries: tuple[ZipEntry, ...]  # files only, archive order
    skipped: tuple[str, ...] = ()  # __MACOSX/ junk, and entries below VCS and build folders

    def top_level(self) -> list[str]:
        return sorted({e.name.split("/", 1)[0] for e in self.entries})


# ---------------------------------------------------------------- writing

# Files that hold credentials by convention (in any case: `.ENV` is `.env` on macOS and Windows):
# the bundle never publishes them, and no archive carries them.
# (`id_*` without an extension: every OpenSSH private key name, `id_ed25519_sk`, `id_work`; `.pub` is public)
CREDENTIAL_NAMES = re.compile(
    r"(?i)(^|/)(\.env(\..*)?|\.envrc|[._]netrc|\.npmrc|\.pypirc|\.pgpass|\.git-credentials|\.dockercfg|\.htpasswd|"
    r"credentials(\.json)?|kubeconfig(\.ya?ml)?|id_[a-z0-9_-]+|\.kube/config|\.docker/config\.json|"
    r".*\.(pem|key|p12|pfx|ppk|jks|keystore|tfvars|tfvars\.json))$")


def excluded(rel: str) -> bool:
    """package_skill.py's exclusions, and credential files, for a path relative to the skill folder."""
    if CREDENTIAL_NAMES.search(rel):
        return True
    parts = PurePosixPath(rel).parts
    if any(p in EXCLUDE_DIRS for p in parts[:-1]) or (len(parts) > 1 and parts[0] in ROOT_EXCLUDE_DIRS):
        return True
    name = parts[-1]
    if name.lower() == ".git":  # (a submodule's `.git` file: a pointer into this clone, which import skips)
        return True
    return name in EXCLUDE_FILES or any(PurePosixPath(name).match(g) for g in EXCLUDE_GLOBS)


def zip_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    """A zip timestamp (UTC, 2-second resolution) for ``epoch``, clamped to what a zip can store."""
    epoch = min(max(int(epoch), ZIP_EPOCH_MIN), 4354819198)  # 2107-12-31
    t = time.gmtime(epoch)
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec - t.tm_sec % 2)


MAX_SOURCE_DATE_EPOCH = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second a date can name


def read_source_date_epoch(env: Mapping[str, str] = os.environ) -> int | None:
    """``SOURCE_DATE_EPOCH`` (reproducible builds: the time written into outputs), or None when unset."""
    value = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit()):  # (str.isdigit accepts "²" and "١٢٣")
        raise SkillcError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, not {value!r}")
    if int(value) > MAX_SOURCE_DATE_EPOCH:
        raise SkillcError(f"SOURCE_DATE_EPOCH {value} is after the year 9999, which dates cannot hold",
                          hint="set it to a commit's time, e.g. $(git log -1 --format=%ct)")
    return int(value)


def source_date_epoch(default: int = 0) -> int:
    """``SOURCE_DATE_EPOCH`` when set, else ``default`` (0 → 1980-01-01 in a zip)."""
    value = read_source_date_epoch()
    return default if value is None else value


def write_zip(members: Iterable[tuple[str, str]], dest: Path, epoch: int) -> list[str]:
    """Write ``(archive name, file on disk)`` pairs deterministically to ``dest`` (atomically).

    Returns the archive names written, in order.
    """
    pairs = sorted(members, key=lambda m: m[0].encode("utf-8", "surrogateescape"))
    names = [n for n, _ in pairs]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ArchiveError(f"two files would have the same path in the archive: {dup}")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    stamp = zip_time(epoch)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with writing(tmp), os.fdopen(fd, "wb") as raw, \
                zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for name, source in pairs:
                st = os.stat(source)
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_STORED if _too_compressible(source, st.st_size) else zipfile.ZIP_DEFLATED
                info.create_system = 3
                mode = 0o755 if st.st_mode & 0o111 else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                with open(source, "rb") as src, zf.open(info, "w", force_zip64=st.st_size > 0x7FFF0000) as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return names


def skill_members(skill: SourceSkill, folder: str | None = None) -> list[tuple[str, str]]:
    """The archive members of one skill: ``<folder>/SKILL.md`` first, then its files (exclusions applied)."""
    folder = folder or skill.id.rsplit("/", 1)[-1]
    main, *rest = skill.files
    members = [(f"{folder}/SKILL.md", main.source_path)]
    members += [(f"{folder}/{f.path}", f.source_path) for f in rest if not excluded(f.path)]
    return members


def write_skill_zip(skill: SourceSkill, dest: Path, epoch: int) -> None:
    """Write ``skill`` as ``dest``: a Claude-compatible zip (one top-level folder named after the skill
    directory, SKILL.md directly inside), byte-identical for the same files and ``epoch``
    (SOURCE_DATE_EPOCH, or 0 for 1980-01-01)."""
    write_zip(skill_members(skill), dest, epoch)


def bomb_like(size: int, compressed: int, limits: Limits = Limits()) -> bool:
    """Whether an entry of ``size`` bytes deflated to ``compressed`` is one ``check_zip`` refuses as a
    likely zip bomb: the writers store such a file instead (a blank 1 MB CSV template deflates 400x),
    so what skillc writes, skillc imports."""
    return size > limits.ratio_floor_bytes and size > limits.max_ratio * max(compressed, 1)


def _too_compressible(source: str, size: int) -> bool:
    if size <= Limits().ratio_floor_bytes:
        return False
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # (zipfile's own stream at compresslevel=9)
    compressed = 0
    with open(source, "rb") as fh:
        while chunk := fh.read(1 << 20):
            compressed += len(packer.compress(chunk))
    return bomb_like(size, compressed + len(packer.flush()))


# ---------------------------------------------------------------- reading

def check_entry_name(raw: str) -> str:
    """The validated posix name of an entry, or ArchiveError."""
    if not raw or "\x00" in raw:
        raise ArchiveError("an entry has an empty name or a NUL byte in it")
    if "\\" in raw:
        raise ArchiveError(f"entry {raw!r} contains a backslash (a Windows path): path with invalid characters")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:(/|$)", raw):  # (`x:y/` is a name with a colon: below)
        raise ArchiveError(f"entry {raw!r} is an absolute path")
    parts = raw.rstrip("/").split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise ArchiveError(f"entry {raw!r} has an empty, '.' or '..' path segment (path traversal)")
        if _WINDOWS_BAD.search(part):
            raise ArchiveError(f"entry {raw!r} contains a control character or one of \\:*?\"<>|")
        try:
            size = len(part.encode("utf-8"))
        except UnicodeEncodeError:  # a file name read from disk that is not UTF-8 (surrogate escapes)
            shown = part.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            raise ArchiveError(f"entry '{shown}' is not a UTF-8 name; zip tools would show it differently "
                               "on every system") from None
        if size > MAX_NAME_BYTES:
            raise ArchiveError(f"entry {raw[:60]!r}… has a name of {size} bytes (file systems stop at "
                               f"{MAX_NAME_BYTES})")
    if len(raw.encode("utf-8")) > MAX_PATH_BYTES:
        raise ArchiveError(f"entry {raw[:60]!r}… is a path of more than {MAX_PATH_BYTES} bytes")
    return raw


def entry_name(info: zipfile.ZipInfo) -> str:
    """The name of an entry as the tool that wrote it meant it.  Without the UTF-8 flag zipfile reads
    a name as code page 437 (the zip standard), but Info-ZIP's `zip` on Linux and macOS's Finder
    write UTF-8 without the flag: `café.md` would be extracted as `caf├⌐.md`.  Bytes that are valid
    UTF-8 are taken as UTF-8 (as `unzip` and Go's archive/zip do); a real code-page-437 name with
    accents almost never is (`é` is 0x82, which UTF-8 never starts a character with)."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def skipped_below(name: str) -> bool:
    """The entry sits below a folder discovery never looks into (VCS, build output): import skips it."""
    folders = name.split("/")[:-1]
    return not SKIP_DIRS.isdisjoint(folders) or any(f.lower() in _VCS_DIRS for f in folders)


def check_names(names: Sequence[str], where: str) -> None:
    """ArchiveError when two of ``names`` (files, and the folders on their way) would be one name on
    a case-insensitive or normalizing file system (macOS, Windows), or a name is both a file and a
    folder."""
    seen: dict[str, str] = {}
    files = set(names)
    for name in names:
        parts = name.split("/")
        for i in range(1, len(parts) + 1):
            path = "/".join(parts[:i])
            if i < len(parts) and path in files:
                raise ArchiveError(f"{where}: {path!r} is both a file and a folder")
            folded = unicodedata.normalize("NFC", path).casefold()
            other = seen.setdefault(folded, path)
            if other != path:
                raise ArchiveError(f"{where}: {other!r} and {path!r} collide (they differ only by case or "
                                   "Unicode normalization)")


def git_layout_folders(names: Sequence[str]) -> list[str]:
    """The folders of ``names`` (as written) laid out as a git repository (HEAD, objects/ and refs/,
    what git looks for): git run in one, as a shell prompt does on `cd`, reads its config, which can
    run commands (core.fsmonitor), as a skipped `.git/config` could.  In any case (macOS, Windows)."""
    folders = {n.lower().rsplit("/", 1)[0] for n in names if "/" in n}
    below = set()
    for folder in folders:
        parts = folder.split("/")
        below.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    out = []
    for name in names:
        head, _, leaf = name.rpartition("/")
        if leaf.lower() == "head" and f"{head.lower()}/objects" in below and f"{head.lower()}/refs" in below:
            out.append(head)
    return out


def check_git_layout(names: Sequence[str], where: str) -> None:
    """ArchiveError when a folder of ``names`` is laid out as a git repository (``git_layout_folders``)."""
    found = git_layout_folders(names)
    if found:
        raise ArchiveError(f"{where}: {found[0]!r} is laid out as a git repository (HEAD, objects/, refs/): "
                           "git run in it would read its config, which can run commands")


def check_zip(path: Path, limits: Limits = Limits()) -> ZipListing:
    """Open and validate an archive without extracting it.  Raises ArchiveError naming the entry."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ArchiveError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"{path}: not a valid zip archive ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_entries:
            raise ArchiveError(f"{path}: {len(infos):,} entries (the limit is {limits.max_entries:,})")
        entries: list[ZipEntry] = []
        skipped: list[str] = []
        seen: set[str] = set()
        total = 0
        for info in infos:
            raw = entry_name(info)
            if raw.startswith(JUNK_PREFIXES) or raw.rsplit("/", 1)[-1] == ".DS_Store":
                skipped.append(raw)
                continue
            if skipped_below(raw) or raw.rsplit("/", 1)[-1].lower() == ".git":
                # VCS and build folders: discovery never looks inside them, so lint would not see what
                # they hold, and a .git/config can run commands in the next `git status`; so can the
                # config of the folder a `.git` file (`gitdir: …`) names, which may be in the archive.
                skipped.append(raw)
                continue
            try:
                name = check_entry_name(raw)
            except ArchiveError as exc:  # (named with the archive, as every other refusal is)
                raise ArchiveError(f"{path}: {exc}") from None
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise ArchiveError(f"{path}: entry {name!r} is a symbolic link (links are never extracted)")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise ArchiveError(f"{path}: entry {name!r} is not a regular file")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{path}: entry {name!r} is encrypted")
            if info.is_dir() or kind == stat.S_IFDIR:
                continue
            if name in seen:
                raise ArchiveError(f"{path}: entry {name!r} is in the archive twice")
            seen.add(name)
            if info.file_size > limits.max_file_bytes:
                raise ArchiveError(f"{path}: entry {name!r} is {info.file_size:,} bytes uncompressed "
                                   f"(the limit is {limits.max_file_bytes:,})")
            if bomb_like(info.file_size, info.compress_size, limits):
                raise ArchiveError(f"{path}: entry {name!r} expands {info.file_size // max(info.compress_size, 1):,}x "
                                   f"(a zip bomb? the limit is {limits.max_ratio}x)")
            total += info.file_size
            if total > limits.max_total_bytes:
                raise ArchiveError(f"{path}: more than {limits.max_total_bytes:,} bytes uncompressed")
            entries.append(ZipEntry(name, info.file_size, info.compress_size, bool(mode & 0o111), info))
        check_names([e.name for e in entries], str(path))
        check_git_layout([e.name for e in entries], str(path))
    return ZipListing(path, digest, tuple(entries), tuple(skipped))


def extract_zip(listing: ZipListing, dest: Path, limits: Limits = Limits(),
                only: Sequence[str] | None = None) -> list[Path]:
    """Extract a checked archive into ``dest`` (created; must not exist or be empty).

    ``only``: extract just these top-level folders.  Returns the files written.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise ArchiveError(f"{dest}: the extraction directory is not empty")
    root = os.path.realpath(dest)
    written: list[Path] = []
    total = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with zipfile.ZipFile(listing.path) as zf:
        for entry in listing.entries:
            if only is not None and entry.name.split("/", 1)[0] not in only:
                continue
            target = os.path.join(root, *entry.name.split("/"))
            parent = os.path.dirname(target)
            try:
                os.makedirs(parent, exist_ok=True)
                real = os.path.realpath(parent)
                if real != root and not real.startswith(root + os.sep):
                    raise ArchiveError(f"{listing.path}: entry {entry.name!r} would be written outside {dest}")
                fd = os.open(target, flags, 0o755 if entry.executable else 0o644)
            except OSError as exc:
                raise ArchiveError(f"{listing.path}: entry {entry.name!r} cannot be written into {dest}: "
                                   f"{exc.strerror or exc}") from None
            count = 0
            try:
                with os.fdopen(fd, "wb") as out, zf.open(entry.info) as src:
                    while chunk := src.read(1 << 20):
                        count += len(chunk)
                        total += len(chunk)
                        if count > entry.size or count > limits.max_file_bytes or total > limits.max_total_bytes:
                            raise ArchiveError(f"{listing.path}: entry {entry.name!r} inflates beyond its "
                                               "declared size or the limits (a zip bomb?)")
                        out.write(chunk)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
                raise ArchiveError(f"{listing.path}: entry {entry.name!r} cannot be read: {exc}") from None
            except NotImplementedError as exc:
                raise ArchiveError(f"{listing.path}: entry {entry.name!r}: {exc}") from None
            written.append(Path(target))
    return written


__all__ = ["ArchiveError", "Limits", "ZipEntry", "ZipListing", "check_entry_name", "check_git_layout", "check_names", "git_layout_folders",
           "check_zip", "entry_name", "excluded", "extract_zip", "skill_members", "skipped_below", "source_date_epoch", "write_skill_zip", "write_zip", "zip_time"]
