"""mkdocs' ``build`` with the pages rendered by ``jobs`` forked workers (inside the bounded child).

mkdocs renders one page at a time: at 1,000 skills its 1,536 pages are ≈ 90 % of the site's cost,
and the machine's other cores sit idle.  ``build`` below is mkdocs' own (``mkdocs.commands.build``,
1.6) with its page loop handed to ``skillc.parallel.fork_map_async``: the workers are forked once
mkdocs has its configuration, files, navigation and theme environment, and each one reads, renders
(``Page.render``, bounded by ``bounded._bounded`` in every process: ``PAGE_SECONDS``,
``RENDER_FRAMES``, the fallback log, appended a line at a time) and writes its share of the pages;
meanwhile this process copies the theme's files and writes the 404 page.  Workers die with this
process (``parallel.die_with_parent``); a page that fails fails the site with its name, as in
mkdocs; a worker that dies fails it too.

A page's HTML depends on its own source, the configuration, the navigation and the theme, never on
another page's rendering, except the titles of the pages in the nav (the nav every page shows):
those pages are read and rendered here before the fork, as mkdocs reads every page before it
writes any (and written here, which compiles the theme's templates once for every worker).  So the site is byte-identical to a one-process build (tested).  Fewer than
``parallel.MIN_ITEMS`` pages to render (a rebuild after a change: forking would cost more than it
saves) are rendered in this process; with one job, or a configuration whose behaviour spans pages
(strict mode, plugins, anchor validation, ``mkdocs serve``), mkdocs' own ``build`` runs unchanged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial

from ...errors import SkillcError
from ...parallel import MIN_ITEMS, fork_map_async

log = logging.getLogger("mkdocs.commands.build")


def use_workers(jobs: int) -> None:
    """Replace ``mkdocs.commands.build.build`` (what ``mkdocs build`` calls) by one rendering the
    pages in ``jobs`` worker processes."""
    from mkdocs.commands import build as commands

    serial = commands.build

    def build(config, *, serve_url: str | None = None, dirty: bool = False) -> None:
        if jobs <= 1 or serve_url or config.strict or list(config.plugins) or (
                config.validation.links.anchors > logging.DEBUG):
            serial(config, serve_url=serve_url, dirty=dirty)
            return
        _build(config, dirty, jobs)

    commands.build = build


def _build(config, dirty: bool, jobs: int) -> None:
    """mkdocs' ``build`` for a configuration without plugins, strict mode or anchor validation."""
    from mkdocs import utils
    from mkdocs.structure.files import InclusionLevel, get_files, set_exclusions
    from mkdocs.structure.nav import get_navigation
    from mkdocs.structure.pages import Page

    start = time.monotonic()
    if not dirty:
        log.info("Cleaning site directory")
        utils.clean_directory(config.site_dir)
    log.info(f"Building documentation to directory: {config.site_dir}")
    files = get_files(config)
    env = config.theme.get_env()
    files.add_files_from_theme(env, config)
    set_exclusions(files, config)
    nav = get_navigation(files, config)
    docs = files.documentation_pages(inclusion=InclusionLevel.is_included)
    for file in docs:
        if file.page is None:
            Page(None, file, config)
    todo = [file.page for file in docs if not dirty or file.is_modified()]
    render_pages(config, files, docs, nav, env, todo, jobs,
                 partial(files.copy_static_files, dirty=dirty, inclusion=InclusionLevel.is_included), dirty)
    log.info(f"Documentation built in {time.monotonic() - start:.2f} seconds")


def render_pages(config, files, docs, nav, env, todo: list, jobs: int, meanwhile: Callable[[], None],
                 dirty: bool = False) -> None:
    """Read, render and write the pages ``todo`` (the nav's first, here; the others by ``jobs``
    workers), while this process runs ``meanwhile`` (copying static files) and builds the theme's
    static templates; ``docs``: every documentation page (the template's ``pages``)."""
    from mkdocs.commands import build as commands
    from mkdocs.exceptions import Abort

    pending_ids = {id(page) for page in todo}  # (by identity: a Page compares by title, which reads it)
    first = [page for page in nav.pages if id(page) in pending_ids]  # (their titles are in every page's nav)
    for page in first:
        commands._populate_page(page, config, files, dirty)
    for page in first:  # (and the theme's templates are compiled once, here, not in every worker)
        commands._build_page(page, config, docs, nav, env, dirty)
    done = {id(page) for page in first}
    todo = [page for page in todo if id(page) not in done]
    if len(todo) >= MIN_ITEMS:  # (fewer run in this process: see parallel.fork_map_async)
        log.info(f"Rendering {len(todo)} pages in {jobs} worker processes")
    pending = fork_map_async(partial(_page, config, files, docs, nav, env, dirty), todo, jobs)
    try:
        meanwhile()
        for template in config.theme.static_templates:
            commands._build_theme_template(template, env, files, config, nav)
        failed = [error for error in pending.result() if error is not None]
    except SkillcError as exc:  # a worker died (killed, out of memory)
        pending.cancel()
        raise Abort(f"Error: the docs site's page workers stopped: {exc}") from None
    except BaseException:
        pending.cancel()
        raise
    if failed:
        raise Abort(f"Aborted with a BuildError! {failed[0]}")


def _page(config, files, docs, nav, env, dirty: bool, page) -> str | None:
    """In a worker: read, render and write one page; its error (mkdocs' message) instead of raising,
    so the parent reports it whatever the exception (some do not pickle)."""
    from mkdocs.commands import build as commands

    try:
        commands._populate_page(page, config, files, dirty)
        commands._build_page(page, config, docs, nav, env, dirty)
    except Exception as exc:  # noqa: BLE001  (mkdocs logged it; the parent fails the site with it)
        return f"Error building page '{page.file.src_uri}': {exc}"
    return None


__all__ = ["render_pages", "use_workers"]
