"""The mkdocs project as text: ``project_files(model, options) -> {path: text}`` (pure).

Pages come from the Jinja templates in ``site/pages/``, ``mkdocs.yml`` from ``site/mkdocs.yml.j2``.
Every ``{{ value }}`` a template prints is escaped as Markdown text (``finalize``) unless it is
``Md`` (Markdown this module built itself), so a description, name or memory is always shown as
written: ``{baseDir}``, ``$ARGUMENTS``, ``{{ x }}``, ``*``, ``<script>`` appear literally.  The
Markdown engine is locked down as well (``markdown_safe``): raw HTML is text, script URLs are dropped.

Layout (every page is an ``index.md``, so a link relative to the page's folder is relative to its
URL too)::

    index.md                         home: collections and skills (all of them up to HOME_LIMIT)
    skills/<id>/index.md             one page per skill
    collections/index.md             every collection
    collections/<path>/index.md      one page per collection: its sub-collections and skills
    all/index.md, all/<n>/index.md   every skill, PAGE_SIZE per page
    provenance/index.md              repositories, resolved commits, shadowing
    lint/index.md                    lint profile, every diagnostic, excluded skills
    memory/index.md, memory/<category>/index.md, memory/…/<n>/index.md   the memory tab
    search/index.md                  search (the bundle's own BM25 index, api/index/)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import quote

from ...formatting import human_size
from ...resources import data_dir, template_environment
from .markdown_safe import FILES_REFERENCE, visible_bidi
from .model import CATEGORIES, SiteModel, SkillInfo

HOME_LIMIT = 500  # skills listed on the home page (above: the "All skills" pages)
PAGE_SIZE = 500  # rows per "All skills" / memory page
PUBLISHED_LIST = "skillc-published.txt"  # beside mkdocs.yml: the files a body may link (markdown_safe)


class Md(str):
    """Markdown built by this module: printed as is."""


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|])")


def md(value: Any) -> Md:
    """Any value as literal inline Markdown text on one line."""
    if isinstance(value, Md):
        return value
    text = "" if value is None else str(value)
    text = visible_bidi(" ".join(text.split()))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Md(_MD_SPECIAL.sub(r"\\\1", text))


def code(value: Any) -> Md:
    """An inline code span holding ``value`` exactly (one line)."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Md(f"{fence}{pad}{text}{pad}{fence}")


def url_path(path: str) -> str:
    return quote(path, safe="/")


def skill_doc(skill_id: str) -> str:
    return f"skills/{skill_id}/index.md"


def collection_doc(path: str) -> str:
    return f"collections/{path}/index.md" if path else "collections/index.md"


def depth(doc: str) -> int:
    return doc.count("/")


class Page:
    """Helpers bound to one page: relative links from its folder."""

    def __init__(self, doc: str) -> None:
        self.doc = doc
        self.root = "../" * depth(doc)

    def href(self, target: str) -> str:
        return self.root + url_path(target)

    def link(self, text: Any, target: str) -> Md:
        return Md(f"[{md(text)}]({self.href(target)})")

    def encoded_link(self, text: Any, href: str) -> Md:
        """A link to ``href``, a URL path relative to the site root that is already percent-encoded."""
        return Md(f"[{md(text)}]({self.root}{href})")

    def api_document(self, skill_id: str) -> Md:
        return self.encoded_link("API document", "api/skills/" + quote(skill_id, safe=""))

    def skill(self, skill_id: str, text: Any = None) -> Md:
        return self.link(skill_id if text is None else text, skill_doc(skill_id))

    def collection(self, path: str) -> Md:
        return self.link(path or "(top level)", collection_doc(path))


def lint_cell(s: SkillInfo) -> Md:
    if s.lint == "ok":
        return Md("✓ ok")
    return Md(f"⚠ {s.warnings} warning{'' if s.warnings == 1 else 's'}")


def size_cell(s: SkillInfo) -> Md:
    n = len(s.files)
    return Md(f"{n} file{'' if n == 1 else 's'}, {md(human_size(s.size))}")


def stars(importance: Any) -> str:
    from ...memory.recall import stars as _stars

    return _stars(float(importance or 0))


def badge(entry: Mapping[str, Any]) -> Md:
    from ...memory.recall import badge as _badge

    text = _badge(entry)
    return code(text) if text else Md("")


@cache
def _environment():
    env = template_environment(data_dir("site"), trim_blocks=True, keep_trailing_newline=True, finalize=md)
    env.filters.update(code=code, md=md, raw=Md, size=human_size, lint=lint_cell, files=size_cell, stars=stars,
                       badge=badge, tojson_text=_json,
                       lookup=lambda keys, mapping: [mapping[k] for k in keys])
    env.globals.update(CATEGORIES=CATEGORIES, code=code)
    return env


def _json(value: Any) -> Md:
    import json

    return Md(json.dumps(value, ensure_ascii=False))


def render(template: str, doc: str, **values: Any) -> str:
    return _environment().get_template(template).render(page=Page(doc), **values)


def _chunks(items: tuple, size: int) -> list[tuple]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [()]


def _paged_docs(prefix: str, count: int) -> list[str]:
    """``prefix/index.md``, ``prefix/2/index.md``…"""
    return [f"{prefix}/index.md" if i == 0 else f"{prefix}/{i + 1}/index.md" for i in range(count)]


# Titles of the pages that are not skill pages (their H1s in site/pages/, and the 404 page's): a
# skill named like one of them is told apart by its ID as well.
FIXED_TITLES = frozenset({"All skills", "Collections", "Skills", "Lint report", "Provenance", "Search",
                          "Page not found"})


def title_text(value: Any) -> str:
    """A title as the reader sees it: one line, bidirectional controls made visible (as ``md``)."""
    return visible_bidi(" ".join(str(value).split()))


def skill_titles(model: SiteModel) -> dict[str, str]:
    """Each skill page's title: its name, or ``name (id)`` when another skill, a collection or a
    report page has the same name (two ``codeql`` skills from different repositories both read
    "codeql - Skills" in a tab, its history and bookmarks)."""
    taken: dict[str, int] = {}
    for s in model.skills:
        taken[title_text(s.name)] = taken.get(title_text(s.name), 0) + 1
    others = FIXED_TITLES | {title_text(c.path) for c in model.collections}
    titles = {}
    for s in model.skills:
        name = title_text(s.name)
        shared = taken[name] > 1 or name in others or name.startswith(("All skills (", "Memory: "))  # paged, memory
        titles[s.id] = f"{name} ({title_text(s.id)})" if shared else name
    return titles


def front_matter(**meta: str) -> Md:
    """YAML front matter mkdocs reads into ``page.meta`` (any text: PyYAML quotes and escapes it)."""
    import yaml

    text = yaml.safe_dump(meta, allow_unicode=True, width=float("inf"), default_style='"', sort_keys=True)
    return Md(f"---\n{text}---\n")


def body_markdown(s: SkillInfo, page: Page) -> Md:
    """The skill body, then the reference that points its relative links at the bundle's files."""
    body = s.body if s.body.endswith("\n") or not s.body else s.body + "\n"
    base = page.href(f"api/files/{s.id}/")
    return Md(f"{body}\n[{FILES_REFERENCE}]: {base}\n")


def project_files(model: SiteModel, options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Every generated file of the mkdocs project: ``mkdocs.yml``, ``docs/**.md`` and the list of
    published files ``markdown_safe`` reads (``PUBLISHED_LIST``)."""
    options = dict(options or {})
    by_id = {s.id: s for s in model.skills}
    files: dict[str, str] = {}
    common = {"model": model, "by_id": by_id, "home_limit": HOME_LIMIT,
              "collections_by_path": {c.path: c for c in model.collections}}

    def add(doc: str, template: str, **values: Any) -> None:
        files["docs/" + doc] = render(template, doc, **common, **values)

    all_pages = _chunks(model.skills, PAGE_SIZE)
    all_docs = _paged_docs("all", len(all_pages))
    add("index.md", "pages/home.md.j2", all_docs=all_docs)
    for n, (doc, chunk) in enumerate(zip(all_docs, all_pages)):
        add(doc, "pages/all.md.j2", skills=chunk, number=n + 1, docs=all_docs)
    add("collections/index.md", "pages/collections.md.j2")
    for c in model.collections:
        add(collection_doc(c.path), "pages/collection.md.j2", collection=c)
    titles = skill_titles(model)
    for s in model.skills:
        doc = skill_doc(s.id)
        # The title goes to site/overrides/main.html as page.meta.skillc_title (escaped there), not
        # as mkdocs' `title`, which material prints unescaped; the page's H1 stays the name.
        add(doc, "pages/skill.md.j2", skill=s, body=body_markdown(s, Page(doc)),
            meta=front_matter(skillc_title=titles[s.id]))
    add("provenance/index.md", "pages/provenance.md.j2")
    add("lint/index.md", "pages/lint.md.j2")
    memory_nav: list[tuple[str, str]] = []
    if model.memory is not None:
        entries = tuple(e for e in model.memory.entries if e.get("status", "active") == "active")
        views = [("memory", "All", entries)]
        for cat, label, _ in CATEGORIES:
            views.append((f"memory/{cat}", label, tuple(
                e for e in entries if e.get("type") == "semantic" and (e.get("category") or "fact") == cat)))
        views.append(("memory/episodic", "Episodes", tuple(e for e in entries if e.get("type") == "episodic")))
        views.append(("memory/procedural", "Procedures", tuple(e for e in entries if e.get("type") == "procedural")))
        filters = [(label, f"{prefix}/index.md", len(items)) for prefix, label, items in views]
        for prefix, label, items in views:
            chunks = _chunks(items, PAGE_SIZE)
            docs = _paged_docs(prefix, len(chunks))
            for n, (doc, chunk) in enumerate(zip(docs, chunks)):
                add(doc, "pages/memory.md.j2", label=label, entries=chunk, number=n + 1, docs=docs,
                    filters=filters, total=len(items))
        memory_nav = [("Memory", "memory/index.md")]
    add("search/index.md", "pages/search.md.j2", memory=model.memory is not None)
    nav = [("Home", "index.md"), ("All skills", "all/index.md"), ("Collections", "collections/index.md"),
           ("Provenance", "provenance/index.md"), ("Lint", "lint/index.md"), *memory_nav,
           ("Search", "search/index.md")]
    # What the bundle publishes below api/files/: markdown_safe links a body's relative link or image
    # only to one of these (a file left out, a folder, a withheld or excluded skill's file was a 404).
    files[PUBLISHED_LIST] = "".join(sorted(f"{s.id}/{f.path}\n" for s in model.skills for f in s.files))
    files["mkdocs.yml"] = _environment().get_template("mkdocs.yml.j2").render(
        model=model, nav=nav, site_name=options.get("site_name", "Skills"), site_url=options.get("site_url") or "",
        page=Page("mkdocs.yml"),
        published_list=PUBLISHED_LIST)
    return files
