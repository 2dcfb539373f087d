"""Incremental site builds: one changed skill re-renders only the pages that show it.

The generated mkdocs project and mkdocs' output are kept between builds in the build cache
(``<cache>/site/<hash of the output folder>/``, never in the bundle).  Each build writes only the
project files whose text changed (the others keep their modification time), removes the pages of
skills that are gone, and runs ``mkdocs build --dirty``, which renders a page again only when its
source is newer than its output; a page whose inputs are unchanged (its key, ``pages.Planned``)
is not even rendered to Markdown.  Anything every page depends on (the theme files, the tool
versions, ``mkdocs.yml``, the lists of published files and pages that ``markdown_safe`` reads, the
clock) is the *frame key*: when it changes, the kept state is dropped and mkdocs builds clean.
The result is then hard-linked into the staging folder: byte-identical to a clean build (a test
holds it to that).  Linking is safe because no file of the kept output is ever written in place:
the bounded mkdocs unlinks a file before writing it, and so do the build's own records.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..staging import Staging
    from .pages import Planned

FRAME_KEY = "frame.key"
PAGE_KEYS = "pages.json"  # the key each project file was last written with (absent while it is being written)
MODEL_MEMO = "model.pickle"  # each skill's memo record (``model.site_model_memo``)
MEMO_FORMAT = "skillc-site-model-2"
PAGE_TEMPLATES = "page-templates"  # the page templates compiled (``compiled_templates``)  # (the records' layout: ``model.MemoRecord``)


def state_dir(cache_dir: Path, out: Path) -> Path:
    """Where the project and output of the bundle built into ``out`` are kept."""
    digest = hashlib.sha256(os.fsencode(os.path.abspath(out))).hexdigest()[:16]
    return Path(os.path.abspath(cache_dir)) / "site" / digest  # (mkdocs runs in another folder)


def frame_key(keys: Mapping[str, str], theme_key: str, shared: tuple[str, ...]) -> str:
    """What every page depends on: the theme and tools (``theme_key``) and the shared files (their keys)."""
    h = hashlib.sha256(theme_key.encode())
    for rel in shared:
        h.update(rel.encode() + b"\0" + keys.get(rel, "").encode() + b"\0")
    return h.hexdigest()


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One build at a time uses the kept state of an output folder."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def sync(plan: Mapping[str, Planned], project: Path, previous: Mapping[str, str] | None,
         theme: frozenset[str]) -> tuple[list[str], list[str]]:
    """Bring the kept project up to date with ``plan`` (``pages.project_plan``): a file whose key is
    the one it was written with (``previous``, read by ``read_keys``) is not even rendered; another is
    rendered and written only if its text changed (an unchanged file keeps its modification time,
    so mkdocs skips its page); generated files no longer planned are deleted (``previous`` lists
    them; without it, every file but the theme's own, ``theme``).  Returns the deleted paths and
    the written ones."""
    generated = previous.keys() if previous is not None else set(listing(project)) - theme
    removed = sorted(rel for rel in generated if rel not in plan)
    for rel in removed:
        (project / rel).unlink(missing_ok=True)
    changed: list[str] = []
    unchanged = previous if previous is not None else {}
    for rel, planned in plan.items():
        # (no stat of the 23,000 unchanged files: only this function writes the kept project, under
        # the lock, and ``previous`` is read only when the last sync finished: ``build_incremental``)
        if unchanged.get(rel) == planned.key:
            continue
        path = project / rel
        data = planned.render().encode("utf-8", "surrogateescape")
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changed.append(rel)
    return removed, changed


def read_keys(folder: Path) -> dict[str, str] | None:
    """The key each project file was written with (``write_keys``); None when unknown."""
    try:
        keys = json.loads((folder / PAGE_KEYS).read_bytes())
    except (OSError, ValueError):
        return None
    return keys if isinstance(keys, dict) and all(isinstance(v, str) for v in keys.values()) else None


def write_keys(folder: Path, plan: Mapping[str, Planned]) -> None:
    (folder / PAGE_KEYS).write_text(json.dumps({rel: p.key for rel, p in plan.items()}, sort_keys=True))


def read_memo(folder: Path) -> dict[str, tuple]:
    """The model's memo kept in ``folder`` (``write_memo``); empty when absent or unreadable (each
    record is checked against its skill's key before use: ``model._skill_info``)."""
    try:
        with open(folder / MODEL_MEMO, "rb") as fh:
            layout, memo = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
        return {}
    ok = layout == MEMO_FORMAT and isinstance(memo, dict)
    return memo if ok and all(isinstance(r, tuple) and len(r) == 11 for r in memo.values()) else {}


def write_memo(folder: Path, memo: Mapping[str, tuple]) -> None:
    """Replace the kept memo with ``memo`` (atomically: a build reading it meanwhile sees one whole
    memo); a cache that cannot be written is only slower next time."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{MODEL_MEMO}.", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((MEMO_FORMAT, dict(memo)), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, folder / MODEL_MEMO)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def compiled_templates(state: Path, code_key: str) -> Path | None:
    """The folder below the site's kept state (``state``) that keeps the page templates compiled
    (``pages._environment``): named by what compiling depends on besides a template's source (the
    environment's options, set by the code ``code_key`` digests and by ``resources``; Jinja;
    Python), so a compiled template is only ever read by the code that wrote it; an older one's
    folder is removed.  None when it cannot be made (a read-only cache: templates compiled each build)."""
    import sys

    import jinja2

    from ... import resources

    h = hashlib.sha256(f"{code_key}|{jinja2.__version__}|{sys.version}\0".encode())
    h.update(Path(resources.__file__).read_bytes())
    parent = state / PAGE_TEMPLATES
    folder = parent / h.hexdigest()[:16]
    if not folder.is_dir():
        shutil.rmtree(parent, ignore_errors=True)
        try:
            folder.mkdir(parents=True)
        except OSError:
            return None
    return folder if os.access(folder, os.W_OK) else None


def files_below(folder: Path) -> list[str]:
    """Every file's path below ``folder`` (links not followed), in no particular order."""
    out: list[str] = []
    if not folder.is_dir():
        return out
    with os.scandir(folder) as it:
        entries = list(it)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            out.extend(files_below(Path(entry.path)))
        else:
            out.append(entry.path)
    return out


def listing(root: Path) -> list[str]:
    """Every file below ``root``, relative, '/'-separated (``files_below``: scandir)."""
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in files_below(root)]


def output_of(rel: str) -> str | None:
    """The built file of a project file (``docs/x/index.md`` → ``x/index.html``, ``docs/a.json`` →
    ``a.json``); None for the others (``mkdocs.yml``, the theme's overrides)."""
    if not rel.startswith("docs/"):
        return None
    doc = rel[len("docs/"):]
    return doc[:-len(".md")] + ".html" if doc.endswith("index.md") else doc


def drop_outputs(site: Path, removed: list[str]) -> None:
    """The built files of removed project files (``output_of``)."""
    for rel in removed:
        target = output_of(rel)
        if target is not None:
            (site / target).unlink(missing_ok=True)


def read_digests(path: Path) -> dict | None:
    """A generation's digests table (``table_path``); None when
    absent or unreadable (read once a build: ``known_listing`` and ``digests`` share it, 2.3 MB at
    10,000 skills)."""
    try:
        table = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return table if isinstance(table, dict) else None


def known_listing(table: Mapping[str, list] | None, removed: list[str], changed: list[str]) -> list[str] | None:
    """A built tree's files without walking its 20,000 folders: those its generation's table
    ``table`` lists, less the outputs of the removed project files, plus those
    of the written ones (``sync``; mkdocs ``--dirty`` writes nothing else within one frame).  None
    when the table is unreadable; ``digests`` then finds a listed file missing (``FileNotFoundError``)
    if the guess is wrong, and the caller walks."""
    if table is None:
        return None
    gone = {output_of(rel) for rel in removed}
    files = [rel for rel in table if rel not in gone]
    files += [out for out in map(output_of, changed) if out is not None and out not in table]
    return files


def settled_outputs(plan: Mapping[str, Planned], changed: list[str]) -> frozenset[str]:
    """The built files of the project files ``sync`` left as they were: ``mkdocs build --dirty``
    renders a page only when its source is newer than its output, so within one frame it wrote
    none of them (the theme's files, the 404 page and the build's records are not among them)."""
    written = set(changed)
    return frozenset(out for rel in plan if rel not in written and (out := output_of(rel)) is not None)


def link_site(site: Path, staging: Staging, skip, files: list[str],
              inodes: Mapping[str, tuple[int, int, int, str]]) -> list[str]:
    """Hard-link the built site into the staging folder (a copy where linking fails: another file
    system); ``skip(rel)`` leaves a file out.  Safe because nothing ever writes into a kept file:
    the bounded mkdocs unlinks each file before writing it (``bounded.fresh_inodes``) and the
    build replaces its own records, so a bundle holding a link keeps its bytes while the next build
    runs.  The recycled generation's site is reclaimed first (``Staging.reclaim``): a file that
    already is the kept output's inode (``inodes``: ``digests``) stays, only the others are linked
    again, and what the site no longer has goes (``Staging.settle``).  ``files``: the site's files
    (``listing``).  A folder is made only where none is.  Returns the top-level names."""
    kept = [rel for rel in files if not skip(rel)]
    names = sorted({rel.split("/", 1)[0] for rel in kept})
    for name in names:
        staging.reclaim(name)
    made = staging.reclaimed_dirs()
    root, out = os.fspath(site), os.fspath(staging.out)
    for rel in kept:
        parent = rel.rpartition("/")[0]
        if parent and parent not in made:
            try:
                os.makedirs(f"{out}/{parent}", exist_ok=True)
            except OSError:  # (a file of the recycled site in the way: the link below clears it)
                pass
            while parent and parent not in made:
                made.add(parent)
                parent = parent.rpartition("/")[0]
        seen = inodes.get(rel)
        staging.link_file(f"{root}/{rel}", rel, seen[0] if seen is not None else None)
    staging.settle()
    return names


DIGESTS = "digests.json"  # (an older layout's table of the kept output, removed with the state: ``TABLES`` now)


def digests(site: Path, files: list[str], settled: frozenset[str] = frozenset(),
            table: Mapping[str, list] | None = None) -> dict[str, tuple[int, int, int, str]]:
    """The SHA-256 of each of the kept output's ``files``, hashed only where the file is not the
    inode, size and time it was last hashed at (what mkdocs wrote again: a few files on a
    rebuild); the caller keeps the table (``save_table``).  The manifest then reads none of the others (a
    10,000-skill site is 286 MB, 3 s to hash on every build).  ``settled``: files nothing wrote
    since the table was made (``settled_outputs``), taken from it without a ``stat`` (23,000 of
    them at 10,000 skills; the manifest still takes a digest only for the inode, size and time it
    finds in the bundle).  ``table``: the table of the tree ``site`` was (``read_digests``)."""
    table = table or {}
    out: dict[str, tuple[int, int, int, str]] = {}
    for rel in files:
        seen = table.get(rel)
        if rel in settled and isinstance(seen, list) and len(seen) == 4:
            out[rel] = tuple(seen)
            continue
        st = os.stat(site / rel, follow_symlinks=False)
        if isinstance(seen, list) and seen[:3] == [st.st_ino, st.st_size, st.st_mtime_ns]:
            out[rel] = (st.st_ino, st.st_size, st.st_mtime_ns, seen[3])
            continue
        with open(site / rel, "rb") as fh:
            out[rel] = (st.st_ino, st.st_size, st.st_mtime_ns, hashlib.file_digest(fh, "sha256").hexdigest())
    return out


def save_table(path: Path, table: Mapping[str, tuple]) -> None:
    replace_bytes(path, json.dumps({rel: list(v) for rel, v in table.items()}).encode())


def replace_bytes(path: Path, data: bytes) -> None:
    """Write ``path`` as a new file (unlinked first): a bundle may share the old one's inode."""
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def reset(folder: Path) -> None:
    for name in ("project", "site", FRAME_KEY, PAGE_KEYS, DIGESTS, TABLES, HISTORY):
        path = folder / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


# --- the tree a rebuild brings up to date in place --------------------------------------------------
#
# A rebuild renders into a site tree that is already in the staging folder, not into the kept
# output: the recycled generation's own site (two builds old), else the kept output itself moved in
# (after a clean build: the first rebuild), else the visible bundle's site linked in.  So a rebuild
# makes no folder for an unchanged page (a 1,000-skill site has 2,400 of them; the first rebuild
# after a clean one used to link the kept output into a new tree).  Each generation's files are
# known by their inode, size and time (its table, kept here by its site key), and what was written
# into the project since the tree was built is kept too (``HISTORY``): those pages are rendered
# again, and so is a page whose file is no longer what its generation's table says.

TABLES = "tables"  # each recent generation's site: rel -> [inode, size, mtime_ns, sha256], by site key
HISTORY = "history.json"  # [[site key, project files written, project files removed], ...], oldest first
HISTORY_LENGTH = 4  # (a generation is recycled two builds after its own)
SITE_RECORD = "assets/skillc/site.json"  # in the built site: its key and its files (for reuse)
FALLBACK_RECORD = "assets/skillc/fallbacks.json"  # in the built site: the pages shown as plain text (``bounded``)
RECORDS = frozenset({SITE_RECORD, FALLBACK_RECORD})  # (written anew by each build)


class Placing(Enum):
    """How a base tree gets into the staging folder."""
    MOVE = "the kept output's folders renamed in"
    KEEP = "the kept output rendered into, then linked in (no output folder to move it to)"
    RECLAIM = "the recycled generation's site reclaimed"
    LINK = "the visible bundle's site files linked in"


@dataclass(frozen=True)
class Base:
    """A built site to bring up to date: at ``root`` (its files: ``table``), placed into the staging
    folder by ``placing``; ``written``/``removed``: the project files to render again and those whose
    outputs go (since the tree was built, this build's included, and pages whose file was altered)."""
    placing: Placing
    root: Path
    table: dict
    written: frozenset[str]
    removed: frozenset[str]


def table_path(folder: Path, key: str) -> Path:
    return folder / TABLES / f"{key[:32]}.json"


def read_history(folder: Path) -> list[list]:
    try:
        rows = json.loads((folder / HISTORY).read_bytes())
    except (OSError, ValueError):
        return []
    ok = isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], list)
        and isinstance(r[2], list) for r in rows)
    return rows if ok else []


def remember(folder: Path, key: str, written: list[str], removed: list[str],
             table: Mapping[str, tuple], fresh: bool) -> None:
    """Keep this build's generation: its ``table`` by ``key``, and what it wrote into the project
    (``fresh``: after a clean build, the history starts again); tables no entry names are removed."""
    history = ([] if fresh else read_history(folder)) + [[key, sorted(written), sorted(removed)]]
    history = history[-HISTORY_LENGTH:]
    save_table(table_path(folder, key), table)
    named = {table_path(folder, row[0]).name for row in history}
    for path in (folder / TABLES).iterdir():
        if path.name not in named:
            path.unlink(missing_ok=True)
    replace_bytes(folder / HISTORY, json.dumps(history).encode())


def since(history: list[list], key: str) -> tuple[set[str], set[str]] | None:
    """The project files written and removed since the build that made the site ``key`` (its last
    entry); None when the history does not reach it."""
    for at in range(len(history) - 1, -1, -1):
        if history[at][0] == key:
            written: set[str] = set()
            removed: set[str] = set()
            for _key, w, r in history[at + 1:]:
                written.update(w)
                removed.update(r)
            return written, removed
    return None


def altered(root: Path, table: Mapping[str, list], sources: Mapping[str, str]) -> set[str] | None:
    """The project files whose built file below ``root`` is not the one ``table`` lists (another
    inode, size or time: changed since, or missing), to render again; None when such a file is not
    built from the project (a theme file: the tree cannot be used)."""
    again: set[str] = set()
    base = os.fspath(root)
    for rel, row in table.items():
        if rel in RECORDS:
            continue
        try:
            st = os.lstat(f"{base}/{rel}")
            same = stat.S_ISREG(st.st_mode) and [st.st_ino, st.st_size, st.st_mtime_ns] == row[:3]
        except OSError:
            same = False
        if not same:
            source = sources.get(rel)
            if source is None:
                return None
            again.add(source)
    return again


def site_key_of(bundle: Path) -> str | None:
    """The site key a bundle's (or a held tree's) ``SITE_RECORD`` names."""
    try:
        record = json.loads((bundle / SITE_RECORD).read_bytes())
    except (OSError, ValueError):
        return None
    return record.get("key") if isinstance(record, dict) and isinstance(record.get("key"), str) else None


def base_tree(folder: Path, staging: Staging, plan: Mapping[str, Planned], written: list[str],
              removed: list[str]) -> Base | None:
    """The tree this rebuild brings up to date (``Base``): the kept output (a clean build's, until a
    rebuild moves it); else the recycled generation's site, unless it would render again more than
    one file in ``REDO_SHARE`` beyond this build's own (the build before changed much: the visible
    bundle's site is then linked in instead, when it holds); else the visible bundle's; None when
    none holds (the site is then rendered clean into the kept output).  The kept output is always
    up to date with the project: every build that writes the project renders into it or moves it.

    It is moved only where the output folder holds a bundle (``MOVE``): without one (a fresh
    checkout in CI that keeps only the cache) no later build would find a tree to bring up to
    date, so it is rendered into and stays (``KEEP``)."""
    sources = {out: rel for rel in plan if (out := output_of(rel)) is not None}
    history = read_history(folder)
    kept = folder / "site"  # (its table: the last build's, which rendered into it or made its bundle from it)
    if kept.is_dir() and history and (table := read_digests(table_path(folder, history[-1][0]))) is not None:
        placing = Placing.MOVE if staging.current_dir is not None else Placing.KEEP
        return _base(placing, kept, table, (set(), set()), written, removed, plan)
    recycled = _usable(Placing.RECLAIM, staging.held, folder, history, sources, written, removed, plan)
    if recycled is not None and len(recycled.written - set(written)) * REDO_SHARE <= len(recycled.table):
        return recycled
    return _usable(Placing.LINK, staging.current_dir, folder, history, sources, written, removed, plan) or recycled


# Rendering a page costs about twenty times what linking a file into new folders does (3-8 ms against
# 0.1-0.25 ms on this host), so a recycled tree that would render again more than a twentieth of
# its files beyond this build's changes costs more than the visible tree linked in.
REDO_SHARE = 20


def _usable(placing: Placing, root: Path | None, folder: Path, history: list[list], sources: Mapping[str, str],
            written: list[str], removed: list[str], plan: Mapping[str, Planned]) -> Base | None:
    """The site below ``root`` as a ``Base``, when the history reaches its key, its table is kept and
    only pages of it were altered (``altered``); else None."""
    key = None if root is None else site_key_of(root)
    later = None if key is None else since(history, key)
    table = None if later is None else read_digests(table_path(folder, key))
    again = None if table is None else altered(root, table, sources)
    return None if again is None else _base(placing, root, table, (later[0] | again, later[1]), written, removed, plan)


def _base(placing: Placing, root: Path, table: dict, later: tuple[set[str], set[str]], written: list[str],
          removed: list[str], plan: Mapping[str, Planned]) -> Base:
    again = (later[0] | set(written)) & plan.keys()
    gone = (later[1] | set(removed)) - plan.keys()
    return Base(placing, root, table, frozenset(again), frozenset(gone))
