"""A dirty build proportional to the change: the parent's listing instead of mkdocs' walk and stats.

In a rebuild after one changed skill, ``mkdocs build --dirty`` does work in proportion to the whole
site before it renders the few pages that changed: it walks ``docs/`` (every skill has a folder),
makes a ``Page`` of every document for the navigation, and asks each file twice whether its source
is newer than its output (3 ``stat`` calls each).  The parent knows all of it already: it planned
every file of ``docs/`` and wrote the ones whose text changed (``incremental.sync``).  It sends that
``Listing`` on the child's input after the command line (``LISTED_OPTION``), and ``listed_build``:

* stands for mkdocs' ``Files`` with the listing: the same files as ``get_files``' walk (in its
  order when iterated: index and README first, a folder's files before its subfolders; with
  mkdocs' exclusions and its rule for a README beside an index), each ``File`` made when first
  looked up: a rebuild looks up a few (the nav's, the changed pages', their links' targets);
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
import posixpath
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
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


class _Listed(MutableMapping):
    """The ``src_uri -> File`` table of mkdocs' ``Files`` over a listing: a ``File`` is made (its
    inclusion settled as ``set_exclusions`` does) when first looked up; iterating makes them all, in
    ``get_files``' order, then the files added since (the theme's), in the order they were added."""

    def __init__(self, config, docs: Sequence[str]) -> None:
        self._config = config
        self._listed = frozenset(docs)
        self._made: dict = {}
        self._added: dict = {}  # (what Files.append adds: the theme's files; a listed path replaced too)
        self._gone: set[str] = set()
        self._folders: dict[str, list[str]] | None = None
        self._losers: dict[str, frozenset[str]] = {}
        self._include = _inclusion(config)

    def _file(self, rel: str):
        from mkdocs.structure.files import File

        file = self._made.get(rel)
        if file is None:
            file = self._made[rel] = File(rel, self._config.docs_dir, self._config.site_dir,
                                          self._config.use_directory_urls)
            self._include(file)
        return file

    def _present(self, rel: str) -> bool:
        return rel in self._listed and rel not in self._gone and rel not in self._losers_in(rel.rpartition("/")[0])

    def _losers_in(self, folder: str) -> frozenset[str]:
        """The listed files of ``folder`` that ``get_files`` leaves out: of two with one output (a
        README.md beside an index.md), the first unless the second is excluded (its own rule)."""
        if self._folders is None:  # (one pass over the listing, on the first lookup)
            self._folders = {}
            for rel in self._listed:
                self._folders.setdefault(rel.rpartition("/")[0], []).append(rel)
        losers = self._losers.get(folder)
        if losers is None:
            groups: dict[str, list[str]] = {}
            for rel in self._folders.get(folder, ()):  # (one output only if one stem, README as index)
                stem = posixpath.splitext(rel.rpartition("/")[2])[0]
                groups.setdefault("index" if stem == "README" else stem, []).append(rel)
            found: set[str] = set()
            for group in (g for g in groups.values() if len(g) > 1):
                firsts: dict[str, object] = {}
                for file in map(self._file, sorted(group, key=walk_order)):
                    first = firsts.setdefault(file.dest_uri, file)
                    if first is not file:
                        found.add(first.src_uri if file.inclusion.is_included() else file.src_uri)
            losers = self._losers[folder] = frozenset(found)
        return losers

    def __getitem__(self, rel: str):
        if rel in self._added:
            return self._added[rel]
        if not self._present(rel):
            raise KeyError(rel)
        return self._file(rel)

    def __setitem__(self, rel: str, file) -> None:
        from mkdocs.structure.files import InclusionLevel

        if file.inclusion == InclusionLevel.UNDEFINED:  # (mkdocs settles it after adding the theme's)
            self._include(file)
        self._gone.add(rel)
        self._added.pop(rel, None)
        self._added[rel] = file

    def __delitem__(self, rel: str) -> None:
        if rel in self._added:
            del self._added[rel]
        elif self._present(rel):
            self._gone.add(rel)
        else:
            raise KeyError(rel)

    def __iter__(self) -> Iterator[str]:
        yield from sorted((rel for rel in self._listed if self._present(rel)), key=walk_order)
        yield from list(self._added)

    def __len__(self) -> int:
        return sum(1 for rel in self._listed if self._present(rel)) + len(self._added)


def _inclusion(config) -> Callable:
    """``set_exclusions`` for one file at a time, its patterns combined once (mkdocs' own rule)."""
    from mkdocs.structure.files import InclusionLevel, _default_exclude

    exclude = config.get("exclude_docs")
    exclude = _default_exclude + exclude if exclude else _default_exclude
    drafts, nav_exclude = config.get("draft_docs"), config.get("not_in_nav")

    def include(file) -> None:
        if file.inclusion != InclusionLevel.UNDEFINED:
            return
        if exclude.match_file(file.src_uri):
            file.inclusion = InclusionLevel.EXCLUDED
        elif drafts and drafts.match_file(file.src_uri):
            file.inclusion = InclusionLevel.DRAFT
        elif nav_exclude and nav_exclude.match_file(file.src_uri):
            file.inclusion = InclusionLevel.NOT_IN_NAV
        else:
            file.inclusion = InclusionLevel.INCLUDED

    return include


def listed_files(config, docs: Sequence[str]):
    """``mkdocs.structure.files.get_files`` over a listing: the same ``Files``, each ``File`` made
    when first looked up (a rebuild looks up a few: the nav's, the changed pages', their links')."""
    from mkdocs.structure.files import Files

    files = Files(())
    files._src_uris = _Listed(config, docs)  # (Files keeps its table there: every method goes through it)
    return files


class _Pages(Sequence):
    """The documentation pages of ``files`` (the templates' ``pages``), listed when first read:
    mkdocs hands them to every page's template, and ours never read them."""

    def __init__(self, files) -> None:
        self._files, self._pages = files, None

    def _all(self) -> list:
        if self._pages is None:
            from mkdocs.structure.files import InclusionLevel

            self._pages = self._files.documentation_pages(inclusion=InclusionLevel.is_included)
        return self._pages

    def __getitem__(self, index):
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())


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

    from .page_workers import render_pages

    start = time.monotonic()
    log.info(f"Building documentation to directory: {config.site_dir} ({len(listing.changed)} changed files)")
    files = listed_files(config, listing.docs)
    env = config.theme.get_env()
    files.add_files_from_theme(env, config)
    found = (files.get_file_from_path(rel) for rel in sorted(listing.changed, key=walk_order))
    changed = [f for f in found if f is not None and f.inclusion.is_included()]
    nav = _navigation(files, changed, config)
    docs = _Pages(files)
    pages = [f.page for f in changed if f.is_documentation_page()]

    def meanwhile() -> None:  # (what mkdocs' dirty build copies: the static files newer than their copy)
        for file in changed:
            if not file.is_documentation_page():
                file.copy_file(dirty=False)

    render_pages(config, files, docs, nav, env, pages, jobs, meanwhile)
    log.info(f"Documentation built in {time.monotonic() - start:.2f} seconds")


def use_listing(listing: Listing, jobs: int) -> None:
    """Replace ``mkdocs.commands.build.build`` (after ``page_workers.use_workers``) by
    ``listed_build`` for a dirty build the listing can stand for; any other runs as before."""
    from mkdocs.commands import build as commands

    other = commands.build

    def build(config, *, serve_url: str | None = None, dirty: bool = False) -> None:
        if dirty and not serve_url and applies(config):
            listed_build(config, listing, jobs)
        else:
            other(config, serve_url=serve_url, dirty=dirty)

    commands.build = build


def read_listing(stream) -> Listing:
    """The ``Listing`` line that follows the command line on the child's input."""
    line = stream.readline()
    if not line.strip():
        raise SystemExit(f"{LISTED_OPTION}: no listing followed the command line")
    return Listing.from_json(line)


__all__ = ["LISTED_OPTION", "Listing", "applies", "listed_build", "listed_files", "read_listing", "use_listing",
           "walk_order"]
