"""Writing an output in place, all or nothing: the lock, the staging folder and the swap, once.

Both writers of a folder a user relies on go through here: ``skillc build`` (the whole bundle at
``--out``, swapped in one rename) and ``skillc import`` (each skill folder moved into ``--into``,
all moved or all put back).  Each

* takes a **lock** (``flock``, never waiting) so two processes never write one output;
* works in a **staging folder** under ``<parent>/.skillc-build/`` (``layout.WORK_DIR``: on the output's
  file system, so a rename moves it, and in a folder discovery skips, so a killed run's leftovers are
  never read as skills), removing the leftovers of killed runs first;
* **swaps** on success only: an exception inside the ``with`` removes the staging folder and leaves
  the previous output as it was.

(``exports.write_folder`` writes a folder that must not exist yet, with no lock or previous
generation, and sits below ``build`` in the layers: it keeps its own one rename.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..emit.docsite import RESERVED, SITE_RECORD
from ..emit.manifest import manifest_entries, read_manifest
from ..emit.staging import Staging
from ..locks import release, try_lock
from ..parallel import child_dies_with_build

# --- the lock ------------------------------------------------------------------------------------

class OutputLock:
    """An exclusive ``flock`` on ``path`` for the ``with`` block, or ``busy(holder, path)`` raised at once.

    ``path`` is a lock file (created; it holds the holder's pid, which ``busy`` receives, and is
    emptied on release) or, with ``folder=True``, an existing folder locked through its own
    descriptor (nothing is written: an import leaves nothing behind in the skills folder)."""

    def __init__(self, path: Path, busy: Callable[[str, Path], BaseException], *, folder: bool = False) -> None:
        self.path, self.busy, self.folder = path, busy, folder
        self.fd: int | None = None

    def __enter__(self) -> OutputLock:
        if self.folder:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not try_lock(fd):
            holder = "?" if self.folder else os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise self.busy(holder, self.path)
        if not self.folder:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            if not self.folder:
                os.ftruncate(self.fd, 0)
            release(self.fd)
            self.fd = None


def clean_stale(work: Path, name: str) -> None:
    """Remove the staging folders (``<name>.tmp-*``) of runs that died (the caller holds the lock,
    so none is live)."""
    if not work.is_dir():
        return
    for entry in os.scandir(work):
        if entry.name.startswith(f"{name}.tmp-"):
            shutil.rmtree(entry.path, ignore_errors=True)


# --- the whole-folder swap (build) ----------------------------------------------------------------

@dataclass(frozen=True)
class StagedBundle:
    """Where a build writes its bundle before the swap: the folder, and the emitters' view of it
    (``Staging``: what the recycled previous generation already holds)."""

    path: Path
    staging: Staging


@contextmanager
def staged_bundle(work: Path, out: Path, current_manifest: dict | None,
                  keep_previous: bool) -> Iterator[StagedBundle]:
    """A staging folder for the bundle at ``out`` (the previous generation ``<work>/<name>.prev``
    recycled when it is a sound bundle), swapped in when the block ends normally; the bundle swapped
    out becomes ``<name>.prev`` when ``keep_previous``, else is deleted.  Any
    exception removes the staging folder: ``out`` is left as it was."""
    name = out.name
    path, staging, set_aside = prepare_staging(work, name, out, current_manifest)
    removal = _remove_meanwhile(set_aside)
    try:
        yield StagedBundle(path, staging)
        removal()
        _remove_held(held_folder(path))
        swap_in(path, out, work / f"{name}.prev", keep_previous=keep_previous)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(held_folder(path), ignore_errors=True)
        raise
    finally:
        removal()


def _remove_meanwhile(folder: Path) -> Callable[[], None]:
    """Start deleting ``folder``; the function returned waits until it is gone.

    What the recycled generation does not keep (the site, the legacy tree: thousands of files, 0.5 s
    or more) is deleted while the build runs instead of before it, by ``rm`` in a child process (on
    another core; a thread would make the emitters' worker processes fork a threaded process).  The
    child dies with the build; ``clean_stale`` removes what a killed build left."""
    rm = shutil.which("rm")
    if rm is None:
        shutil.rmtree(folder, ignore_errors=True)
        return lambda: None
    child = subprocess.Popen([rm, "-rf", "--", str(folder)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, preexec_fn=child_dies_with_build())

    def wait() -> None:
        if child.wait() != 0:
            shutil.rmtree(folder, ignore_errors=True)

    return wait


def _remove_held(held: Path) -> None:
    """Delete what no emitter reclaimed of the recycled generation (nothing, in a steady rebuild:
    ``.well-known/agent-skills``; the whole site after a build with ``--no-site``)."""
    for entry in os.scandir(held):
        _remove_meanwhile(Path(entry.path))()
    held.rmdir()


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False when the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP if hasattr(errno, "ENOTSUP") else errno.EINVAL):
            return False
        raise OSError(err, os.strerror(err), str(a))
    return True


def swap_in(staging: Path, out: Path, prev: Path, keep_previous: bool) -> None:
    """Make ``staging`` the bundle at ``out``; the old bundle becomes ``prev`` (or is deleted)."""
    if prev.exists() or prev.is_symlink():
        _remove(prev)
    if not out.exists():
        os.rename(staging, out)
        return
    if _exchange(staging, out):
        old = staging
    else:  # two renames: a crash in between leaves the bundle at `prev`, never a half-written one
        os.rename(out, prev)
        os.rename(staging, out)
        old = prev
    if keep_previous:
        if old != prev:
            os.rename(old, prev)
    else:
        shutil.rmtree(old)


_MANAGED = ("api/skills/", "api/files/", "api/archives/", "api/discovery/")
_HELD = (".well-known",)  # (the legacy tree below it; the site's names come from its record)


def prepare_staging(work: Path, name: str, current: Path,
                    current_manifest: dict | None = None) -> tuple[Path, Staging, Path]:
    """A staging folder: the previous generation recycled when it is a sound bundle, else empty;
    and the folder its other files were moved into, for the caller to delete (``clean_stale``
    deletes it if this process dies first).  The recycled generation's ``.well-known`` and docs site
    are held in ``<staging>-held`` (``Staging.held``) for their emitters to reclaim; the caller
    deletes what is left of it.  ``current_manifest``: the visible bundle's (``check_output`` read it)."""
    staging = work / f"{name}.tmp-{os.getpid()}"
    prev = work / f"{name}.prev"
    set_aside = work / f"{name}.tmp-{os.getpid()}-removed"
    held = held_folder(staging)
    for folder in (set_aside, held):
        shutil.rmtree(folder, ignore_errors=True)
    (set_aside / "api").mkdir(parents=True)
    held.mkdir()
    recycled: dict = {}
    held_entries: dict = {}
    renamed = False
    if prev.is_symlink():  # never a build's own (an older build swapped a linked --out here): not followed
        prev.unlink()
    if prev.is_dir():
        doc = read_manifest(prev)
        if doc is not None:
            os.rename(prev, staging)
            renamed = True
            entries = manifest_entries(doc)
            recycled, held_entries = _set_aside(staging, entries, set_aside, held)
        else:
            os.rename(prev, set_aside / "unsound")
    if not renamed:
        staging.mkdir(parents=True)
    # The visible bundle's manifest is read only if a file is not in the recycled generation (the
    # first rebuild after a full one, or after a change): in a steady rebuild it is never needed.
    return staging, Staging(staging, recycled, current if current_manifest is not None else None,
                            load_current=lambda: manifest_entries(current_manifest), held=held,
                            held_entries=held_entries), set_aside


def held_folder(staging: Path) -> Path:
    return staging.with_name(staging.name + "-held")


def _set_aside(staging: Path, entries: dict, set_aside: Path, held: Path) -> tuple[dict, dict]:
    """Sort the recycled generation in ``staging``: the per-skill files stay (reused by hash), the
    legacy tree and the site are moved to ``held`` (their emitters reclaim them), everything else
    (produced afresh) to ``set_aside``.  Returns the manifest entries of the kept and held files."""
    held_names = {*_HELD, *_site_names(staging)}
    for entry in os.scandir(staging):
        if entry.name in held_names:
            os.rename(entry.path, held / entry.name)
        elif entry.name != "api":
            os.rename(entry.path, set_aside / entry.name)
    for entry in os.scandir(staging / "api") if (staging / "api").is_dir() else ():
        if f"api/{entry.name}/" not in _MANAGED:
            os.rename(entry.path, set_aside / "api" / entry.name)
    (staging / "api" / "skills" / "index.html").unlink(missing_ok=True)
    recycled = {p: e for p, e in entries.items() if p.startswith(_MANAGED) and p != "api/skills/index.html"}
    held_entries = {p: e for p, e in entries.items() if p.split("/", 1)[0] in held_names}
    return recycled, held_entries


def _site_names(bundle: Path) -> set[str]:
    """The top-level names of the bundle's docs site (its record lists its files), none of them
    another emitter's."""
    try:
        record = json.loads((bundle / SITE_RECORD).read_bytes())
        files = record["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return set()
    names = {f.split("/", 1)[0] for f in files if isinstance(f, str)} if isinstance(files, list) else set()
    return names - RESERVED - {"", ".", ".."}


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


# --- folders moved into a folder (import) ---------------------------------------------------------

@contextmanager
def staging_folder(work: Path, name: str) -> Iterator[Path]:
    """A fresh ``<work>/<name>.tmp-*`` folder (``clean_stale`` removes it if the process dies),
    removed when the block ends, whatever happens: what ``move_in`` set aside in it goes too."""
    path = Path(tempfile.mkdtemp(prefix=f"{name}.tmp-", dir=work))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class MoveInError(Exception):
    """``move_in`` could not move a folder into place (``exc``).  ``kept``: where the previous folders
    it could not put back are (None: every one was put back, the target folder is as it was)."""

    def __init__(self, exc: OSError, kept: Path | None = None, stranded: tuple[str, ...] = ()) -> None:
        super().__init__(exc.strerror or str(exc))
        self.exc, self.kept, self.stranded = exc, kept, stranded


def move_in(folders: Sequence[str], into: Path, staging: Path, staged: Path) -> None:
    """Move each ``staged/<folder>`` into ``into`` (an old one aside into ``staging``: removed with
    it); on a failure, put back every one moved before it and raise ``MoveInError``."""
    done: list[tuple[Path, Path | None]] = []  # (target, where its old folder went)
    try:
        for folder in folders:
            target = into / folder
            old = None
            if target.exists() or target.is_symlink():
                old = staging / f"old-{folder}"
                os.replace(target, old)
            done.append((target, old))
            os.replace(staged / folder, target)
    except OSError as exc:
        stranded = _put_back(done, staging)
        if stranded:  # (never deleted: kept under a name no later run or cleanup removes)
            kept = staging.with_name("stranded-" + staging.name)
            os.replace(staging, kept)
            raise MoveInError(exc, kept, tuple(stranded)) from None
        raise MoveInError(exc) from None


def _put_back(done: list[tuple[Path, Path | None]], staging: Path) -> list[str]:
    """Undo ``move_in``'s moves, last first; the names that could not be put back."""
    stranded = []
    for target, old in reversed(done):
        try:
            if os.path.lexists(target):  # (the last one may have failed to move in)
                os.replace(target, staging / f"new-{target.name}")
            if old is not None:
                os.replace(old, target)
        except OSError:
            stranded.append(target.name)
    return stranded


__all__ = ["MoveInError", "OutputLock", "StagedBundle", "clean_stale", "move_in", "prepare_staging",
           "staged_bundle", "staging_folder", "swap_in"]
