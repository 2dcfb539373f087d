"""The team docs site: an mkdocs + mkdocs-material project generated from the build, built into the
bundle's root (``index.html``, ``skills/<id>/``, ``collections/…``, ``provenance/``, ``lint/``,
``memory/``, ``search/``, ``assets/``).

    site_model(ctx)            what to show (``model.py``, pure)
    project_plan(model)        mkdocs.yml + docs/**.md, each file with the key of its inputs and how to
                               render it (``pages.py``, pure; templates in ``site/``)
    write_project(files, dir)  the mkdocs project on disk, with ``site/overrides`` and ``site/assets``
    run_mkdocs(project, dir)   ``mkdocs build`` in a child process (deterministic environment), each
                               page rendered within a time and depth bound (``bounded.py``)
    install(site_dir, out)     the built site moved into the bundle (sitemaps dropped: no site URL)

An unchanged site is not rebuilt: ``site_key`` hashes the generated project's keys, the theme files and
the tool versions; when the visible bundle's ``assets/skillc/site.json`` holds the same key, its
site files are hard-linked into the staging folder (never written through: builds replace files).

``emit_mkdocs_site(ctx)`` runs them all; ``skillc.emit.site.emit_site`` calls it when mkdocs and
material are importable (``pip install 'skillc[site]'``), else writes the minimal page.

The project is written to a temporary sibling of the staging folder (``<staging>.site-*``, removed
afterwards and swept by the next build if the process dies), so nothing lands outside the build's
own folders.  mkdocs runs in a child process: it never sees the build's monkeypatches, log handlers
or environment, and its clock is pinned (``SOURCE_DATE_EPOCH``, ``TZ=UTC``) so the same inputs give
a byte-identical site.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ...errors import BuildError, ConfigError, writing
from ...layout import BUNDLE_TOPS
from ...parallel import child_dies_with_build
from ..staging import Staging
from .incremental import FALLBACK_RECORD, SITE_RECORD, files_below, replace_bytes

if TYPE_CHECKING:  # (annotations only: the mkdocs child imports this package, and resolve_types takes time)
    from ...resolve_types import EmitContext
    from .incremental import Base
    from .listed import Listing
    from .model import SiteModel
    from .pages import Planned

T = TypeVar("T")
SITE_EXTRA_HINT = "pip install 'skillc[site]'"
# Built by mkdocs but meaningless in a bundle: no site_url is known, and the search plugin is off.
DROPPED = ("sitemap.xml", "sitemap.xml.gz", "assets/javascripts/lunr", "assets/javascripts/workers")
RESERVED = BUNDLE_TOPS  # (the other emitters' names: the site never writes them)
TEMPLATE_CACHE = "templates"  # in the kept state: the theme's Jinja templates compiled (bounded.py)


def available() -> bool:
    """mkdocs and mkdocs-material are importable (the ``site`` extra)."""
    return all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material"))


def site_engine(env: dict | None = None) -> str:
    """The docs site a build makes (``emit.site``): ``mkdocs`` when mkdocs and material are
    importable (the ``site`` extra), else ``minimal``; ``$SKILLC_SITE`` (``mkdocs`` or ``minimal``)
    forces one."""
    wanted = (env if env is not None else os.environ).get("SKILLC_SITE", "").strip().lower()
    if wanted not in ("", "mkdocs", "minimal"):
        raise ConfigError(f"SKILLC_SITE must be 'mkdocs' or 'minimal', not {wanted!r}")
    if wanted == "minimal":
        return "minimal"
    if available():
        return "mkdocs"
    if wanted == "mkdocs":
        raise ConfigError("SKILLC_SITE=mkdocs but mkdocs and mkdocs-material are not installed",
                          hint=SITE_EXTRA_HINT)
    return "minimal"


def _data(name: str) -> Path:
    from ...resources import data_dir

    return data_dir("site") / name


def write_project(files: Mapping[str, str], dest: Path) -> Path:
    """Write the generated files below ``dest`` with the theme overrides and assets; returns mkdocs.yml."""
    for rel in sorted(files):
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with writing(path):
            path.write_text(files[rel], encoding="utf-8", newline="\n")
    shutil.copytree(_data("overrides"), dest / "overrides", dirs_exist_ok=True)
    shutil.copytree(_data("assets"), dest / "docs" / "assets", dirs_exist_ok=True)
    return dest / "mkdocs.yml"


def mkdocs_env(epoch: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update({"SOURCE_DATE_EPOCH": str(epoch), "TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
                "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("PYTHONWARNINGS", None)
    return env


def start_mkdocs(epoch: int) -> subprocess.Popen:
    """The bounded mkdocs child, started before its project exists (``bounded.ARGS_FROM_STDIN``): it
    imports mkdocs, the theme's Python side and the Markdown extensions (≈ 0.5 s) while this process
    computes the site's model and writes the project (the build starts it at its own start, so the
    imports overlap the sources and lint too), then waits for ``run_mkdocs`` to send its command
    line; closing its input ends it unused (the site was reused, or the build failed)."""
    from .bounded import ARGS_FROM_STDIN

    try:
        return MkdocsChild([sys.executable, "-m", "skillc.emit.docsite.bounded", ARGS_FROM_STDIN],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", env=mkdocs_env(epoch), preexec_fn=child_dies_with_build())
    except OSError as exc:
        raise BuildError(f"cannot run mkdocs for the docs site: {exc}", hint=SITE_EXTRA_HINT) from None


class MkdocsChild(subprocess.Popen):
    """The mkdocs child ``start_mkdocs`` starts.  Only the process that started it can wait for it
    (``waitpid``); a process forked from that one (the build's forked site) may use it all the
    same: ``relay`` makes the starter send it the child's exit status, which its ``wait`` reads
    (``Popen.wait`` there would take the missing child for one that ended well)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.starter = os.getpid()
        self._relayed = -1  # (in the forked user) the pipe the starter writes the exit status to
        self._relay_thread = None

    def relay(self, fork: Callable[[], T]) -> T:
        """``fork()`` (which forks the process that will use this child and returns what stands for
        it, None when it did not fork), with a thread of this process then waiting for the child
        and sending its exit status to the forked one."""
        import threading

        from ...parallel import CLOSE_IN_CHILD

        read, write = os.pipe()
        self._relayed = read
        CLOSE_IN_CHILD.append(write)  # (the forked user keeps only the read end)
        try:
            forked = fork()
        finally:
            CLOSE_IN_CHILD.remove(write)
            self._relayed = -1
            os.close(read)
        if forked is None:
            os.close(write)
            return forked
        self._relay_thread = threading.Thread(target=self._send_status, args=(write,), daemon=True)
        self._relay_thread.start()
        return forked

    def _send_status(self, write: int) -> None:
        try:
            os.write(write, b"%d\n" % self.wait())
        except OSError:  # (the forked user is gone: killed with a failed or interrupted build)
            pass
        finally:
            os.close(write)

    def poll(self) -> int | None:
        if self.returncode is None and os.getpid() != self.starter:
            return None  # (not this process's to reap: see wait)
        return super().poll()

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and os.getpid() != self.starter and self._relayed >= 0:
            status = b""
            while not status.endswith(b"\n"):
                part = os.read(self._relayed, 32)
                if not part:  # (the starter is gone: this process is about to be killed too)
                    break
                status += part
            self.returncode = int(status) if status.strip() else 1
        return super().wait(timeout)

    def join_relay(self) -> None:
        thread, self._relay_thread = self._relay_thread, None
        if thread is not None:
            thread.join()


def stop_mkdocs(child: subprocess.Popen) -> None:
    """End a child ``start_mkdocs`` started and ``run_mkdocs`` did not use (the site was reused, or
    the build failed): terminated at once rather than waited for (it would end when its imports
    are done and its input is closed: ≈ 0.5 s on the path of a build that reuses its site), which
    is safe because before its command arrives it has written nothing."""
    if child.poll() is None:
        child.terminate()
        try:
            child.communicate(timeout=10)
        except (subprocess.TimeoutExpired, OSError, ValueError):  # (ValueError: its pipes already closed)
            child.kill()
            child.wait()
    if isinstance(child, MkdocsChild) and os.getpid() == child.starter:
        child.join_relay()


def run_mkdocs(config: Path, site_dir: Path, epoch: int = 0, dirty: bool = False,
               templates: Path | None = None, jobs: int = 1, child: subprocess.Popen | None = None,
               listing: Listing | None = None) -> None:
    """``mkdocs build`` of ``config`` into ``site_dir`` in a child process (``child``, from
    ``start_mkdocs`` with the same ``epoch``, else one started now), each page rendered within bounds
    (``bounded``: mkdocs' own command); BuildError on failure.  ``dirty``: render only the pages
    whose source is newer than their output (``incremental``).  ``templates``: a folder keeping the
    theme's compiled templates between builds.  ``jobs``: worker processes rendering the pages
    (``page_workers``).  ``listing`` (with ``dirty``): every file of ``docs/`` and those written
    since the last build, so the child renders just those without walking or comparing times
    (``listed``)."""
    from .bounded import JOBS_OPTION, TEMPLATE_OPTION
    from .listed import LISTED_OPTION

    args = ["build", "--dirty" if dirty else "--clean", "--config-file", str(config.absolute()),
            "--site-dir", str(site_dir.absolute()), JOBS_OPTION, str(max(1, jobs)),
            *((TEMPLATE_OPTION, str(templates.absolute())) if templates is not None else ()),
            *((LISTED_OPTION,) if listing is not None and dirty else ())]
    message = json.dumps(args) + "\n" + (listing.to_json() + "\n" if listing is not None and dirty else "")
    proc = child if child is not None else start_mkdocs(epoch)
    try:
        stdout, stderr = proc.communicate(message)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        _failed(proc.returncode, stderr or stdout, site_dir)


def _failed(returncode: int, output: str, site_dir: Path) -> None:
    """The BuildError of a failed mkdocs child: its last error line, and where to look."""
    lines = [ln for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "ERROR" in ln or "Error" in ln] or lines
    detail = errors[-1].strip() if errors else f"exit status {returncode}"
    environment = any(m in detail for m in ("No space left on device", "Read-only file system",
                                                "Permission denied", "Disk quota exceeded"))
    where = f" into {site_dir}" if environment else ""  # (its own message seldom names the file)
    raise BuildError(f"mkdocs could not build the docs site{where}: {detail}",
                     hint="check the free space and permissions of the output's folder; the previous bundle is "
                          "untouched" if environment else
                     "rebuild with --no-site to skip it, or report the skill text that breaks it")


_DROPPED_NAMES, _DROPPED_FOLDERS = frozenset(DROPPED), tuple(d + "/" for d in DROPPED)


def dropped(rel: str) -> bool:
    """A file mkdocs builds that the bundle leaves out (``DROPPED``, source maps).  (Asked of each
    of a 10,000-skill site's 40,000 files, three times a build: no generator per call.)"""
    return rel in _DROPPED_NAMES or rel.startswith(_DROPPED_FOLDERS) or (
        rel.endswith(".map") and rel.startswith("assets/"))


def _drop(site_dir: Path) -> None:
    for rel in DROPPED:
        path = site_dir / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    for path in files_below(site_dir / "assets"):
        if path.endswith(".map"):  # source maps of material's minified files: 1 MB nobody needs
            os.unlink(path)


def install(site_dir: Path, out: Path) -> list[str]:
    """Move the built site into the bundle folder ``out``; returns the top-level names installed."""
    names = sorted(os.listdir(site_dir))
    clash = [n for n in names if n in RESERVED or (out / n).exists() or (out / n).is_symlink()]
    if clash:
        raise BuildError(f"the docs site would overwrite {', '.join(clash)} in the bundle")
    for name in names:
        os.rename(site_dir / name, out / name)
    return names


def theme_key(epoch: int) -> str:
    """What every page depends on besides the generated project: theme files, tool versions, clock."""
    return site_key({}, epoch)


def site_key(keys: Mapping[str, str], epoch: int) -> str:
    """What the built site depends on: the generated project (each file's key, ``pages.Planned``),
    the theme files, the tool versions."""
    from ...version import __version__
    from .keys import tool_key

    h = hashlib.sha256()
    for dist in ("mkdocs", "mkdocs-material", "markdown"):
        h.update(f"{dist}={tool_key(dist)}\n".encode())
    h.update(f"skillc={__version__}\nepoch={epoch}\n".encode())
    for rel in sorted(keys):
        h.update(rel.encode() + b"\0" + keys[rel].encode() + b"\0")
    for folder in ("overrides", "assets"):
        base = _data(folder)
        for path in sorted(files_below(base)):
            h.update(os.path.relpath(path, base).encode() + b"\0")
            with open(path, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def reuse(key: str, current: Path | None, staging: Staging) -> list[str] | None:
    """Hard-link an unchanged site from the visible bundle (its ``SITE_RECORD`` has the same key)
    into ``staging``, keeping the recycled generation's files that already are those inodes
    (``Staging.reclaim``); None when there is nothing to reuse.  Linked files are never written (a
    build replaces files)."""
    if current is None:
        return None
    try:
        record = json.loads((current / SITE_RECORD).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("files"), list):
        return None
    files = record["files"]
    for rel in files:
        parts = rel.split("/") if isinstance(rel, str) else [""]
        if parts[0] in RESERVED or any(p in ("", ".", "..") for p in parts):
            return None
    names = sorted({rel.split("/")[0] for rel in files})
    for name in names:
        staging.reclaim(name)
    base = os.fspath(current)
    try:
        for rel in files:
            staging.link_file(f"{base}/{rel}", rel)
    except OSError:  # (the visible bundle lacks a file: the site is built; the next placing settles the tree)
        staging.unplace()
        return None
    staging.settle()
    return names


def _record(site_dir: Path, key: str, listing: list[str] | None = None) -> list[str]:
    """``SITE_RECORD``: the site key and the files (``listing``: every file of ``site_dir``, when
    known); returns the files of the site, the record included."""
    from .incremental import listing as list_files

    every = list_files(site_dir) if listing is None else listing
    files = sorted(rel for rel in every if not dropped(rel) and rel != SITE_RECORD)
    files.append(SITE_RECORD)
    replace_bytes(site_dir / SITE_RECORD, json.dumps({"key": key, "files": sorted(files, key=str.encode)},
                                                      ensure_ascii=False, sort_keys=True).encode() + b"\n")
    return files


def site_url(env: Mapping[str, str] | None = None) -> str:
    """``$SKILLC_SITE_URL``, the address the site is served at (``https://acme.github.io/skills/``),
    with a trailing ``/``; "" when unset.  Only the 404 page needs it: it is served at any missing
    path, so its links cannot be relative, and mkdocs writes them from the root (``/assets/…``)
    unless it knows the site's path.  (No script can find the path instead: the CSP forbids inline
    scripts, and a script file is itself at a URL the page cannot resolve.)"""
    from urllib.parse import urlsplit

    from ...errors import ConfigError

    value = (env if env is not None else os.environ).get("SKILLC_SITE_URL", "").strip()
    if not value:
        return ""
    parts = urlsplit(value)
    # Printed into the 404 page's href and src attributes as written: no quote, bracket, space.
    unsafe = any(c in "\"'<>`\\" or c.isspace() or not c.isprintable() or not c.isascii() for c in value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment or unsafe:
        raise ConfigError(f"SKILLC_SITE_URL must be an http(s) URL without query, fragment, quotes or spaces, "
                          f"not {value!r}", hint="for example SKILLC_SITE_URL=https://acme.github.io/skills/")
    return value if value.endswith("/") else value + "/"


def build_site(ctx: EmitContext, options: Mapping[str, object] | None = None) -> list[str]:
    epoch = int(ctx.options.source_date_epoch or ctx.options.epoch or 0)
    # (its imports overlap the model and the project, and with the build's own the earlier stages)
    child = ctx.options.mkdocs or start_mkdocs(epoch)
    try:
        return _build_site(ctx, {"site_url": site_url(), **(options or {})}, epoch, child)
    finally:
        stop_mkdocs(child)


def _build_site(ctx: EmitContext, options: Mapping[str, object], epoch: int, child: subprocess.Popen) -> list[str]:
    from . import incremental
    from .bounded import read_log, read_record, report_fallbacks, write_record
    from .keys import renderer_key
    from .pages import project_plan

    staging = ctx.options.staging or Staging(ctx.out)
    state = None if ctx.cache_dir is None else incremental.state_dir(
        ctx.cache_dir, staging.current_dir or bundle_path(ctx.out))
    plan = project_plan(_model(ctx, state), options,
                        None if state is None else incremental.compiled_templates(state, renderer_key()))
    key = site_key({rel: p.key for rel, p in plan.items()}, epoch)
    reused = reuse(key, staging.current_dir, staging)
    if reused is not None:
        report_fallbacks(ctx, read_record(ctx.out))
        return reused
    if ctx.cache_dir is not None and not os.environ.get("SKILLC_SITE_CLEAN"):
        return build_incremental(plan, key, epoch, ctx, staging, child)
    work = Path(tempfile.mkdtemp(prefix=f"{ctx.out.name}.site-", dir=ctx.out.parent))
    try:
        config = write_project({rel: p.render() for rel, p in plan.items()}, work / "project")
        run_mkdocs(config, work / "site", epoch, jobs=ctx.options.jobs, child=child)
        fallbacks = read_log(config.parent)
        _drop(work / "site")
        write_record(work / "site", fallbacks)
        _record(work / "site", key)
        report_fallbacks(ctx, fallbacks)
        return install(work / "site", ctx.out)
    finally:
        if not os.environ.get("SKILLC_SITE_KEEP"):
            shutil.rmtree(work, ignore_errors=True)


def _model(ctx: EmitContext, state: Path | None) -> SiteModel:
    """``model.site_model_memo`` with the memo kept in the site's state folder ``state`` (a build
    without a cache: none), saved again when this build's differs."""
    from . import incremental
    from .model import site_model_memo

    memo = {} if state is None else incremental.read_memo(state)
    model, kept = site_model_memo(ctx, memo)
    if state is not None and kept != memo:
        incremental.write_memo(state, kept)
    return model


def build_incremental(plan: Mapping[str, Planned], key: str, epoch: int, ctx: EmitContext,
                      staging: Staging, child: subprocess.Popen | None = None) -> list[str]:
    """``incremental``: the kept project brought up to date, then ``mkdocs build --dirty`` into the
    site tree the staging folder already has or is given (``incremental.base_tree``); a clean
    ``mkdocs build`` into the kept output when the frame changed or no tree holds, the result then
    hard-linked into the staging folder."""
    from . import incremental
    from .bounded import forget, report_fallbacks
    from .pages import PAGES_LIST, PUBLISHED_LIST

    folder = incremental.state_dir(ctx.cache_dir, staging.current_dir or bundle_path(ctx.out))
    frame = incremental.frame_key({rel: p.key for rel, p in plan.items()}, theme_key(epoch),
                                  ("mkdocs.yml", PUBLISHED_LIST, PAGES_LIST))
    with incremental.locked(folder):
        project = folder / "project"
        try:
            fresh = (folder / incremental.FRAME_KEY).read_text() != frame
        except OSError:
            fresh = True
        theme = frozenset("overrides/" + p for p in _relative_files(_data("overrides"))) | frozenset(
            "docs/assets/" + p for p in _relative_files(_data("assets")))
        removed: list[str] = []
        changed: list[str] = []
        if fresh:
            incremental.reset(folder)
            write_project({rel: p.render() for rel, p in plan.items()}, project)
        else:
            previous = incremental.read_keys(folder)
            (folder / incremental.PAGE_KEYS).unlink(missing_ok=True)  # (a build that dies in sync: all compared)
            removed, changed = incremental.sync(plan, project, previous, theme)
            forget(project, removed + changed)
        incremental.write_keys(folder, plan)
        (folder / incremental.FRAME_KEY).unlink(missing_ok=True)  # (a build that dies: the next is clean)
        base = None if fresh else incremental.base_tree(folder, staging, plan, changed, removed)
        in_place = base is not None and base.placing is not incremental.Placing.KEEP
        built = _render_in_place(base, folder, plan, theme, key, epoch, ctx, staging, child) if in_place else None
        if built is None:  # (a clean build, the kept output kept, or moving it failed)
            built = _render_kept(folder, plan, theme, key, epoch, ctx, staging, child, base)
        names, digests, fallbacks = built
        (folder / incremental.FRAME_KEY).write_text(frame)
        incremental.remember(folder, key, changed, removed, digests, fresh)
        # (the files keep the built tree's inode, size and time: the manifest reuses these digests)
        ctx.collected.digests.update(digests)
        # The site's folders hold exactly these files (and the .gz copies the precompressed emitter,
        # the only one after this, states): the manifest need not walk them (13,000 folders at
        # 10,000 skills, 0.25-1 s), and still checks each file's inode, size and time.
        ctx.collected.listed.update(name for name in names if (staging.out / name).is_dir())
        report_fallbacks(ctx, fallbacks)
        return names


_Built = tuple[list[str], dict, tuple]  # the site's top-level names, its files' digests, its fallbacks


def _render_kept(folder: Path, plan: Mapping[str, Planned], theme: frozenset[str], key: str, epoch: int,
                 ctx: EmitContext, staging: Staging, child: subprocess.Popen | None, base: Base | None) -> _Built:
    """``_render`` into the kept output (``base``: the kept output itself, brought up to date; None:
    clean), hard-linked into the staging folder; the kept output stays for the next build
    (``incremental.Placing``)."""
    from . import incremental

    site = folder / "site"
    files, digests, fallbacks = _render(site, folder, plan, theme, key, epoch, ctx, child, base)
    _no_clash(site, ctx.out)
    return incremental.link_site(site, staging, dropped, files, digests), digests, fallbacks


def _render_in_place(base: Base, folder: Path, plan: Mapping[str, Planned], theme: frozenset[str], key: str,
                     epoch: int, ctx: EmitContext, staging: Staging, child: subprocess.Popen | None) -> _Built | None:
    """``_render`` into the staging folder itself, once the tree ``base`` (``incremental.Base``) is
    placed there; what the new site no longer has is removed.  None when the tree could not be
    placed (the kept output on another file system: ``_render_kept`` then links it)."""
    from . import incremental

    if not _place(base, staging):
        return None
    files, digests, fallbacks = _render(staging.out, folder, plan, theme, key, epoch, ctx, child, base, among=True)
    if base.placing is incremental.Placing.RECLAIM:
        staging.keep(files)
        staging.settle()
    return sorted({rel.split("/", 1)[0] for rel in files}), digests, fallbacks


def _render(site: Path, folder: Path, plan: Mapping[str, Planned], theme: frozenset[str], key: str, epoch: int,
            ctx: EmitContext, child: subprocess.Popen | None, base: Base | None,
            among: bool = False) -> tuple[list[str], dict, tuple]:
    """``mkdocs build`` of the kept project into ``site``: with ``base`` (the tree ``site`` holds),
    ``--dirty``, rendering only the project files written since that tree was built, the outputs of
    those removed dropped first; without, clean.  Returns the site's files (``SITE_RECORD`` written),
    their digests and the fallbacks.  ``among``: ``site`` holds the rest of the bundle too (a walk
    stays below the site's own top-level names)."""
    from . import incremental
    from .listed import Listing

    written, removed = (sorted(base.written), sorted(base.removed)) if base is not None else ([], [])
    if base is not None:
        incremental.drop_outputs(site, removed)
    run_mkdocs(folder / "project" / "mkdocs.yml", site, epoch, dirty=base is not None,
               templates=folder / TEMPLATE_CACHE, jobs=ctx.options.jobs, child=child,
               listing=None if base is None else Listing.of_project([*plan, *theme], written))
    _drop(site)  # (mkdocs' own build writes a sitemap; the bundle leaves it out)
    fallbacks = _fallbacks(folder / "project", site)
    if base is None:
        return (*_site_files(site, key, None), fallbacks)
    known = [rel for rel in incremental.known_listing(base.table, removed, written) if rel != FALLBACK_RECORD]
    known += [FALLBACK_RECORD] if fallbacks else []
    tops = frozenset(rel.split("/", 1)[0] for rel in known) if among else None
    return (*_site_files(site, key, known, incremental.settled_outputs(plan, written), base.table, tops), fallbacks)


def _place(base: Base, staging: Staging) -> bool:
    """Put the tree ``base`` into the staging folder (``incremental.Placing``); False when the kept
    output cannot be moved there (another file system: it stays where it is, whole)."""
    from . import incremental

    tops = sorted({rel.split("/", 1)[0] for rel in base.table})
    if any(top in RESERVED for top in tops):
        raise BuildError(f"the docs site would overwrite {', '.join(t for t in tops if t in RESERVED)} in the bundle")
    if base.placing is incremental.Placing.RECLAIM:
        for top in tops:
            staging.reclaim(top)
    elif base.placing is incremental.Placing.LINK:
        root = os.fspath(base.root)
        for rel, row in base.table.items():
            try:
                staging.link_file(f"{root}/{rel}", rel, row[0])
            except FileNotFoundError:  # (a page gone from the visible bundle: rendered again, ``altered``)
                pass
    else:
        return _move_kept(base.root, staging.out)
    return True


def _move_kept(site: Path, out: Path) -> bool:
    """Rename the kept output's top-level entries into ``out`` (its sitemaps and source maps dropped
    first); all of them or, on a failure, none (those moved are moved back)."""
    _drop(site)
    moved: list[str] = []
    try:
        for name in sorted(os.listdir(site)):
            os.rename(site / name, out / name)
            moved.append(name)
    except OSError:
        for name in reversed(moved):
            os.rename(out / name, site / name)
        return False
    site.rmdir()
    return True


def _fallbacks(project: Path, site: Path) -> tuple:
    """The pages shown as plain text (``bounded``), recorded in the built site."""
    from .bounded import read_log, write_record

    fallbacks = read_log(project)
    (site / FALLBACK_RECORD).unlink(missing_ok=True)
    write_record(site, fallbacks)
    return fallbacks


def _no_clash(site: Path, out: Path) -> None:
    clash = [n for n in sorted(os.listdir(site)) if n in RESERVED or (out / n).exists()]
    if clash:
        raise BuildError(f"the docs site would overwrite {', '.join(clash)} in the bundle")


def _site_files(site: Path, key: str, known: list[str] | None, settled: frozenset[str] = frozenset(),
                table: Mapping | None = None, tops: frozenset[str] | None = None) -> tuple[list[str], dict]:
    """The built site's files (``known`` when the caller could tell them without walking, else
    walked: below ``tops`` only, when ``site`` holds more than the site) with ``SITE_RECORD``
    written, and the digests of those the bundle publishes (``settled``: files unchanged since the
    tree was built, ``incremental.digests``; ``table``: the tree's digests, ``incremental.read_digests``)."""
    from . import incremental

    if known is not None:
        try:
            return _listed(site, key, known, settled, table)
        except FileNotFoundError:  # (a file the known listing names is not there: walked instead)
            pass
    walked = incremental.listing(site) if tops is None else _walk_tops(site, tops)
    return _listed(site, key, walked, table=table)


def _walk_tops(site: Path, tops: frozenset[str]) -> list[str]:
    """The site's files below ``tops`` in a folder that holds more (a staging folder), without the
    ``.gz`` copies a recycled tree still holds (the precompressed emitter makes them again)."""
    from . import incremental

    found = {rel for top in sorted(tops) for rel in ([top] if (site / top).is_file() else
                                                     [f"{top}/{r}" for r in incremental.listing(site / top)])}
    return sorted(rel for rel in found if not (rel.endswith(".gz") and rel[:-3] in found))


def _listed(site: Path, key: str, listing: list[str],
            settled: frozenset[str] = frozenset(), table: Mapping | None = None) -> tuple[list[str], dict]:
    from . import incremental

    files = _record(site, key, listing)
    return files, incremental.digests(site, [rel for rel in files if not dropped(rel)], settled, table)


def bundle_path(staging: Path) -> Path:
    """The bundle a staging folder becomes (``<out>/../.skillc-build/<name>.tmp-<pid>`` → ``<out>``),
    so the first build and the next ones keep their state in one place."""
    from ...layout import WORK_DIR

    name = re.sub(r"\.tmp-\d+$", "", staging.name)
    parent = staging.parent.parent if staging.parent.name == WORK_DIR else staging.parent
    return parent / name


def _relative_files(folder: Path) -> list[str]:
    return [os.path.relpath(p, folder).replace(os.sep, "/") for p in files_below(folder)]


def emit_mkdocs_site(ctx: EmitContext) -> None:
    build_site(ctx)


__all__ = ["available", "build_site", "emit_mkdocs_site", "install", "run_mkdocs", "site_engine", "write_project"]
