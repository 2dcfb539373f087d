"""A dirty build proportional to the change: the parent's listing instead of mkdocs' walk and stats.

In a rebuild after one changed skill, ``mkdocs build --dirty`` does work in proportion to the whole
site before it renders the few pages that changed: it walks ``docs/`` (every skill has a folder),
makes a ``Page`` of every document for the navigation, and asks each file twice whether its source
is newer than its output (3 ``stat`` calls each).  The parent knows all of it already: it planned
every file of ``docs/`` and wrote the ones whose text changed (``incremental.sync``).  It sends that
``Listing`` on the child's input after the command line (``LISTED_OPTION``), and ``listed_build``:

* makes mkdocs' ``File`` objects from the listing, in the order ``get_files`` walks them (index and
  README first, a folder's files before its subfolders), with mkdocs' own exclusions and its rule
  for a README beside an index: the same ``Files`` as the walk, without touching the disk;
* builds the navigation from ``mkdocs.yml``'s ``nav`` as mkdocs does, making ``Page`` objects only
  for the pages it names and the changed ones (every other page keeps its output, so needs none);
* renders and writes the changed pages (``page_workers.render_pages``: bounds, workers, fallback
  log) and copies the changed static files; the theme's files and the 404 page are part of the
  frame (``incremental.frame_key``), unchanged within it, so nothing else is written.

Anything the listing cannot stand for (a configuration without a ``nav``, plugins, strict mode,
anchor validation) runs mkdocs' own dirty build.  The output is byte-identical to a clean build's
(tested); a listed file missing from ``docs/`` fails the build only if it changed (it is read).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

LISTED_OPTION = "--listed-docs"  # the Listing follows the command line on stdin, as one JSON line

log = logging.getLogger("mkdocs.commands.build")


@dataclass(frozen=True)
class Listing:
    """Every file below ``docs/`` (relative, ``/``-separated) and those the parent wrote in this build."""

    docs: tuple[str, ...]
    changed: frozenset[str]

    def to_json(self) -> str:
        return json.dumps({"docs": list(self.docs), "changed": sorted(self.changed)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Listing:
        data = json.loads(line)
        return cls(tuple(str(d) for d in data["docs"]), frozenset(str(c) for c in data["changed"]))

    @classmethod
    def of_project(cls, project_files: Iterable[str], written: Iterable[str]) -> Listing:
        """From project paths (``docs/…``; other files of the project are left out)."""
        docs = sorted({rel[len("docs/"):] for rel in project_files if rel.startswith("docs/")})
        return cls(tuple(docs), frozenset(rel[len("docs/"):] for rel in written if rel.startswith("docs/")))


def applies(config) -> bool:
    """The configuration has nothing whose behaviour spans pages beyond what ``listed_build`` keeps."""
    return (config.nav is not None and not list(config.plugins) and not config.strict
            and config.validation.links.anchors <= logging.DEBUG)


def walk_order(rel: str) -> tuple:
    """The place of ``rel`` in ``os.walk``'s top-down order as ``get_files`` sorts it (folders by
    name, then within one: ``index``/``README`` first, files before subfolders)."""
    from mkdocs.structure.files import _file_sort_key

    *folders, name = rel.split("/")
    return (*((1, f) for f in folders), (0, *_file_sort_key(name)))


def listed_files(config, docs: Sequence[str]):
    """``mkdocs.structure.files.get_files`` from a listing: the same ``Files``, in the same order."""
    from mkdocs.structure.files import File, Files, set_exclusions

    files: list[File] = []
    by_dest: dict[tuple[str, str], File] = {}
    conflicts: list[tuple[File, File]] = []
    for rel in sorted(docs, key=walk_order):
        file = File(rel, config.docs_dir, config.site_dir, config.use_directory_urls)
        first = by_dest.setdefault((rel.rpartition("/")[0], file.dest_uri), file)
        if first is not file:  # (a README.md beside an index.md: get_files keeps one)
            conflicts.append((first, file))
        files.append(file)
    set_exclusions(files, config)
    for a, b in conflicts:  # (as get_files settles them)
        loser = a if b.inclusion.is_included() else b
        if loser is a and a.inclusion.is_included():
            log.warning(f"Excluding '{a.src_uri}' from the site because it conflicts with '{b.src_uri}'.")
        if loser in files:
            files.remove(loser)
    return Files(files)


def _navigation(files, changed: list, config):
    """mkdocs' ``get_navigation``, which makes a ``Page`` of every document not in the nav: here of
    the changed ones only (the nav's own pages are made from ``mkdocs.yml`` either way)."""
    from mkdocs.structure.files import Files, InclusionLevel
    from mkdocs.structure.nav import get_navigation

    class Changed(Files):
        def documentation_pages(self, *, inclusion=InclusionLevel.is_included) -> Sequence:
            return [f for f in changed if f.is_documentation_page() and inclusion(f.inclusion)]

    view = Changed(())
    view._src_uris = files.src_uris  # (the nav's paths are looked up among every file)
    return get_navigation(view, config)


def listed_build(config, listing: Listing, jobs: int) -> None:
    """``mkdocs build --dirty`` of the files ``listing`` names as changed (see the module)."""
    import time

    from mkdocs.structure.files import InclusionLevel

    from .page_workers import render_pages

    start = time.monotonic()
    log.info(f"Building documentation to directory: {config.site_dir} ({len(listing.changed)} changed files)")
    files = listed_files(config, listing.docs)
    env = config.theme.get_env()
    files.add_files_from_theme(env, config)
    changed = [f for f in files if f.src_uri in listing.changed and f.inclusion.is_included()]
    nav = _navigation(files, changed, config)
    docs = files.documentation_pages(inclusion=InclusionLevel.is_included)
    pages = [f.page for f in changed if f.is_documentation_page()]

    def meanwhile() -> None:  # (what mkdocs' dirty build copies: the static files newer than their copy)
        for file in changed:
            if not file.is_documentation_page():
                file.copy_file(dirty=False)

    render_pages(config, files, docs, nav, env, pages, jobs, meanwhile)
    log.info(f"Documentation built in {time.monotonic() - start:.2f} seconds")


def read_listing(stream) -> Listing:
    """The ``Listing`` line that follows the command line on the child's input."""
    line = stream.readline()
    if not line.strip():
        raise SystemExit(f"{LISTED_OPTION}: no listing followed the command line")
    return Listing.from_json(line)


__all__ = ["LISTED_OPTION", "Listing", "applies", "listed_build", "listed_files", "read_listing", "walk_order"]
