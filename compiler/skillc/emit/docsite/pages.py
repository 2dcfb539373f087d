"""The mkdocs project as text: ``project_files(model, options) -> {path: text}`` (pure).

Pages come from the Jinja templates in ``site/pages/``, ``mkdocs.yml`` from ``site/mkdocs.yml.j2``.
Every ``{{ value }}`` a template prints is escaped as Markdown text (``finalize``) unless it is
``Md`` (Markdown this module built itself), so a description, name or memory is always shown as
written: ``{baseDir}``, ``$ARGUMENTS``, ``{{ x }}``, ``*``, ``<script>`` appear literally.  The
Markdown engine is locked down as well (``markdown_safe``): raw HTML is text, script URLs are dropped.

Layout (every page is an ``index.md``, so a link relative to the page's folder is relative to its
URL too; page N > 1 of a list is ``<folder>/~N/index.md``)::

    index.md                         home: install the registry, collection tree, first HOME_LIMIT cards
    skills/<id>/index.md             one page per skill (install panel, source, files, SKILL.md)
    skills/<id>/_files/<path>/index.md   a supporting text file (a reference rendered, code highlighted)
    collections/index.md             the collection tree
    collections/<path>/index.md      one page per collection: its sub-collections and skill cards
    all/index.md, all/~<n>/index.md  every skill, PAGE_SIZE cards a page; filters (skillc-catalog.html)
    provenance/index.md              repositories, resolved commits, shadowing
    lint/index.md                    lint summary: by rule and by collection
    lint/rules/<code>/…, lint/collections/<path>/…, lint/top/…   the findings, FINDINGS_PAGE a page
    memory/index.md, memory/<category>/index.md, …/~<n>/index.md   the memory tab
    search/index.md                  search (the bundle's own BM25 index, api/index/)
    assets/skillc/catalog/*.json     the filters' and search snippets' data (CATALOG_CHUNK skills a file)
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...formatting import human_size
from ...resources import data_dir, template_environment
from .keys import renderer_key
from .markdown_config import yaml_entries
from .markers import FILES_REFERENCE, HTML_END, HTML_START, visible_bidi
from .model import CATEGORIES, SiteModel, SkillInfo, collection_of
from .provenance import TextPage

HOME_LIMIT = 50  # skills shown on the home page (the others: the "All skills" pages)
PAGE_SIZE = 50  # skill cards per "All skills" / collection page: a page stays under ~50 KB at any size
FINDINGS_PAGE = 150  # rows per lint page (by rule, by collection)
MEMORY_PAGE = 100  # memories per memory page
CATALOG_CHUNK = 250  # skills per assets/skillc/catalog/NNN.json (the filters load them as needed)
SUMMARY_CHARS = 200  # a description shown on a card is cut here
TEXT_DIR = "_files"  # skills/<id>/_files/<path>/: a supporting file's page
PAGES_LIST = "skillc-pages.txt"  # beside mkdocs.yml: supporting files that have a page (markdown_safe)
PLACEHOLDER_URL = "https://skills.example.com/"  # shown in commands when SKILLC_SITE_URL is unset
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


def text_doc(skill_id: str, path: str) -> str:
    return f"skills/{skill_id}/{TEXT_DIR}/{path}/index.md"


def paged_doc(folder: str, number: int) -> str:
    """Page ``number`` (1-based) of a list whose first page is ``folder/index.md``; later pages
    in ``~N`` folders (a name no skill or collection folder has in practice)."""
    return f"{folder}/index.md" if number == 1 else f"{folder}/~{number}/index.md"


def depth(doc: str) -> int:
    return doc.count("/")


class Page:
    """Helpers bound to one page: relative links from its folder."""

    def __init__(self, doc: str) -> None:
        self.doc = doc
        self.root = "../" * depth(doc)

    def href(self, target: str) -> str:
        return self.root + url_path(target)

    def url(self, target: str) -> str:
        """The URL of the page ``target`` (an ``index.md``) relative to this one, as mkdocs writes a
        Markdown link to it (``../x/index.md`` → ``../x/``, this page itself → ``./``)."""
        here, there = self.doc[:-len("index.md")], url_path(target[:-len("index.md")])
        return posixpath.relpath("/" + there, "/" + here) + "/"

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

    def external(self, text: Any, url: str) -> Md:
        """A link to an http(s) URL (markdown_safe drops any other scheme)."""
        return Md(f"[{md(text)}](<{url.replace('>', '%3E').replace('<', '%3C')}>)")


@dataclass(frozen=True)
class Install:
    """What the install commands name: this registry's URL (``SKILLC_SITE_URL``) or a placeholder."""

    url: str
    known: bool

    @classmethod
    def of(cls, site_url: str) -> Install:
        return cls(site_url, True) if site_url else cls(PLACEHOLDER_URL, False)


def truncate_text(value: Any, limit: int = SUMMARY_CHARS) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


_HTTP_URL = re.compile(r"^https?://[^\s<>\"'`]+$")


def meta_value(value: str, page: Page) -> Md:
    """A frontmatter value: a web URL as a link, a JSON list as its items, else the text."""
    text = value.strip()
    if _HTTP_URL.match(text):
        return page.external(text, text)
    if text.startswith("[") and text.endswith("]"):
        import json

        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if isinstance(items, list) and all(isinstance(i, (str, int, float)) for i in items):
            return Md(" ".join(code(i) for i in items))
    return md(value)


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
def _environment(compiled: str | None = None):
    """The page templates' Jinja environment; ``compiled``: a folder keeping them compiled between
    builds (Jinja's bytecode cache, which compiles a template again when its source changes):
    compiling the 17 templates took longer than rendering a one-change rebuild's pages."""
    env = template_environment(data_dir("site"), trim_blocks=True, keep_trailing_newline=True, finalize=md)
    if compiled is not None:
        from jinja2 import FileSystemBytecodeCache

        env.bytecode_cache = FileSystemBytecodeCache(compiled)
    env.filters.update(code=code, md=md, raw=Md, size=human_size, lint=lint_cell, files=size_cell, stars=stars,
                       badge=badge, tojson_text=_json, truncate_text=truncate_text, meta_value=meta_value,
                       lookup=lambda keys, mapping: [mapping[k] for k in keys])
    html = _html_environment(compiled)
    env.globals.update(CATEGORIES=CATEGORIES, code=code, collection_doc=collection_doc, text_doc=text_doc,
                       html_cards=partial(skill_cards, env=html), html_pager=partial(pager, env=html))
    return env


@cache
def _html_environment(compiled: str | None = None):
    """The environment of the HTML the list pages hold (``skill_cards``): autoescaping, so every
    value printed is text; ``compiled`` as for ``_environment`` (its own file names there: the two
    environments compile with different options)."""
    env = template_environment(data_dir("site"), autoescape=True, trim_blocks=True)
    if compiled is not None:
        from jinja2 import FileSystemBytecodeCache

        env.bytecode_cache = FileSystemBytecodeCache(compiled, pattern="__html_%s.cache")
    env.filters.update(text=title_text, size=human_size, lint=lint_cell, truncate_text=truncate_text)
    env.globals.update(collection_doc=collection_doc, skill_doc=skill_doc)
    return env


def skill_cards(page: Page, skills, env=None) -> Md:
    """The skill cards of a list page as one generated HTML block (``markdown_safe``: passed through
    on a page whose front matter marks it, not parsed as Markdown: a list page's cards were most of
    its rendering), laid out as Markdown renders a list of them: one card a tight list, more a
    loose one (each card a paragraph)."""
    skills = list(skills)
    html = (env or _html_environment()).get_template("pages/_cards.html.j2").render(page=page, skills=skills,
                                                                         loose=len(skills) > 1)
    return _html_block(html) if skills else Md("")


def pager(page: Page, docs: list[str], number: int, env=None) -> Md:
    """Links to the pages ``docs`` of a list, page ``number`` in bold, as a generated HTML block
    (``skill_cards``); nothing for a list of one page."""
    if len(docs) < 2:
        return Md("")
    html = (env or _html_environment()).get_template("pages/_pager.html.j2").render(page=page, docs=docs, number=number)
    return _html_block(html)


def _html_block(html: str) -> Md:
    """Generated HTML between the lines ``markdown_safe`` passes it through between (on marked pages)."""
    return Md(f"{HTML_START}\n{html.rstrip()}\n{HTML_END}\n")


def _json(value: Any) -> Md:
    return Md(json.dumps(value, ensure_ascii=False))


def render(template: str, doc: str, **values: Any) -> str:
    return _render(_environment(), template, doc, values)


def _render(env, template: str, doc: str, values: Mapping[str, Any]) -> str:
    return env.get_template(template).render(page=Page(doc), **values)


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
    names = {s.id: title_text(s.name) for s in model.skills}  # (once a skill: 10,000 of them)
    taken: dict[str, int] = {}
    for name in names.values():
        taken[name] = taken.get(name, 0) + 1
    others = FIXED_TITLES | {title_text(c.path) for c in model.collections}
    titles = {}
    for sid, name in names.items():
        shared = taken[name] > 1 or name in others or name.startswith(("All skills (", "Memory: "))  # paged, memory
        titles[sid] = f"{name} ({title_text(sid)})" if shared else name
    return titles


def front_matter(**meta: str) -> Md:
    """YAML front matter mkdocs reads into ``page.meta``: each value a double-quoted YAML scalar
    (``yaml_quoted``; PyYAML's dumper took half the time of generating the pages)."""
    lines = "".join(f"{key}: {yaml_quoted(value)}\n" for key, value in sorted(meta.items()))
    return Md(f"---\n{lines}---\n")


# What YAML prints unescaped in a double-quoted scalar (its "printable" set, minus line breaks).
_YAML_PLAIN = re.compile("[\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def yaml_quoted(value: str) -> str:
    """``value`` as a YAML double-quoted scalar: any text, read back exactly (quotes, backslashes,
    controls and line breaks escaped)."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif _YAML_PLAIN.match(ch):
            out.append(ch)
        else:
            code_point = ord(ch)
            out.append(f"\\x{code_point:02X}" if code_point < 0x100 else f"\\u{code_point:04X}" if code_point < 0x10000
                       else f"\\U{code_point:08X}")
    return '"' + "".join(out) + '"'


def body_markdown(s: SkillInfo, page: Page) -> Md:
    """The skill body, then the reference that points its relative links at the bundle's files."""
    body = s.body if s.body.endswith("\n") or not s.body else s.body + "\n"
    base = page.href(f"api/files/{s.id}/")
    return Md(f"{body}\n[{FILES_REFERENCE}]: {base}\n")


def text_markdown(s: SkillInfo, text: TextPage, page: Page) -> Md:
    """A supporting file's content: Markdown rendered (its links relative to its own folder), any
    other text as one highlighted code block (a fence longer than any backtick run in it)."""
    if text.language == "markdown":
        folder = text.path.rsplit("/", 1)[0] + "/" if "/" in text.path else ""
        body = text.text if text.text.endswith("\n") or not text.text else text.text + "\n"
        return Md(f"{body}\n[{FILES_REFERENCE}]: {page.href(f'api/files/{s.id}/{folder}')}\n")
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`{3,}", text.text)), default=0) + 1)
    body = text.text if text.text.endswith("\n") else text.text + "\n"
    return Md(f"{fence}{text.language}\n{body}{fence}\n")


def _chunks_of(items: tuple, size: int) -> list[tuple]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [()]


def catalog_files(model: SiteModel) -> dict[str, str]:
    """``docs/assets/skillc/catalog/``: every skill's card data for the filters (``catalog.js``),
    ``CATALOG_CHUNK`` a file, loaded only when a reader filters; ``index.json`` names the chunks
    and the facet values."""
    return {rel: planned.render() for rel, planned in catalog_plan(model).items()}


def catalog_plan(model: SiteModel) -> dict[str, Planned]:
    """``catalog_files`` planned: a chunk's key is its skills' digests (``SkillInfo.digest`` holds
    every value of a row), so a rebuild encodes only the chunks of the skills that changed."""
    chunks = _chunks_of(model.skills, CATALOG_CHUNK)
    tags = sorted({t for s in model.skills for t in s.tags}, key=str.encode)
    header = {"fields": ["id", "name", "description", "collection", "tags", "repository", "warnings", "size",
                         "tokens"], "total": len(model.skills), "chunk_size": CATALOG_CHUNK,
              "chunks": [f"{i:03d}.json" for i in range(len(chunks))],
              "collections": [c.path for c in model.collections], "tags": tags,
              "repositories": sorted({s.repository for s in model.skills}, key=str.encode)}
    out = {"docs/assets/skillc/catalog/index.json": _fixed(_compact(header))}
    for i, chunk in enumerate(chunks):
        rel = f"docs/assets/skillc/catalog/{i:03d}.json"
        out[rel] = Planned(_digest(renderer_key(), rel, [s.digest for s in chunk]),
                           lambda chunk=chunk: _compact({"skills": [_catalog_row(s) for s in chunk]}))
    return out


def _catalog_row(s: SkillInfo) -> list:
    return [s.id, s.name, truncate_text(s.description), s.collection, list(s.tags), s.repository, s.warnings,
            s.size, s.body_tokens]


def _compact(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"


def lint_views(model: SiteModel) -> tuple[list[dict], list[dict]]:
    """The lint report split: one view per rule, one per collection of the finding's skill."""
    by_rule: dict[str, list] = {}
    by_collection: dict[str, list] = {}
    for r in model.lint_rows:
        by_rule.setdefault(r["code"], []).append(r)
        by_collection.setdefault(collection_of(r["skill"]) if r.get("skill") else "", []).append(r)
    rules = [{"code": code_, "severity": rows[0]["severity"], "count": len(rows), "rows": tuple(rows),
              "doc": f"lint/rules/{code_}/index.md", "folder": f"lint/rules/{code_}", "title": f"rule {code_}"}
             for code_, rows in sorted(by_rule.items())]
    groups = [{"label": path or "(top level)", "rows": tuple(rows), "title": path or "top level",
               "folder": f"lint/collections/{path}" if path else "lint/top",
               "doc": f"lint/collections/{path}/index.md" if path else "lint/top/index.md",
               "errors": sum(1 for r in rows if r["severity"] == "error"),
               "warnings": sum(1 for r in rows if r["severity"] == "warning")}
              for path, rows in sorted(by_collection.items(), key=lambda kv: kv[0].encode())]
    return rules, groups


@dataclass(frozen=True)
class Planned:
    """A generated file before its text exists: ``key`` digests everything its text depends on
    (equal keys, equal text), ``render()`` makes the text.  An incremental build renders only the
    files whose key changed since the kept project was written (``incremental.sync``)."""

    key: str
    render: Callable[[], str]


def _digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _fixed(text: str) -> Planned:
    """A file rendered now (pages that read the whole model, data files): its key is its text."""
    return Planned(_digest(renderer_key(), text), lambda: text)


def skill_keys(model: SiteModel) -> dict[str, str]:
    """Each skill's digest: everything a page can show of it (``SkillInfo.digest``)."""
    return {s.id: s.digest for s in model.skills}


def project_plan(model: SiteModel, options: Mapping[str, Any] | None = None,
                 compiled: Path | None = None) -> dict[str, Planned]:
    """Every generated file of the mkdocs project, planned: ``mkdocs.yml``, ``docs/**.md``, the
    catalog data and the lists ``markdown_safe`` reads (``PUBLISHED_LIST``, ``PAGES_LIST``).
    Pages that read the whole model (home, collections, provenance, lint summary, memory, search)
    are rendered now; a skill's pages, its files' pages and the paged lists get only their own
    values, and their key is made of those values (skills by ``skill_keys``).  ``compiled``: the
    folder keeping the templates compiled (``incremental.compiled_templates``)."""
    options = dict(options or {})
    env = _environment(None if compiled is None else str(compiled))
    by_id = {s.id: s for s in model.skills}
    keys = skill_keys(model)
    collections_by_path = {c.path: c for c in model.collections}
    install = Install.of(options.get("site_url") or "")
    plan: dict[str, Planned] = {}
    common = {"model": model, "by_id": by_id, "home_limit": HOME_LIMIT, "collections_by_path": collections_by_path,
              "top_collections": [c.path for c in model.collections if "/" not in c.path], "install": install}

    def add(doc: str, template: str, **values: Any) -> None:
        plan["docs/" + doc] = _fixed(_render(env, template, doc, {**common, **values}))

    def add_own(doc: str, template: str, key: tuple, values: Callable[[], dict[str, Any]]) -> None:
        plan["docs/" + doc] = Planned(_digest(renderer_key(), template, doc, key),
                                      lambda: _render(env, template, doc, values()))

    def add_paged(folder: str, template: str, items: tuple, size: int, key: str, **values: Any) -> list[str]:
        chunks = _chunks_of(items, size)
        docs = [paged_doc(folder, n + 1) for n in range(len(chunks))]
        shared = _digest(docs, sorted(values.items()))  # (once a list, not once a page: 200 pages at 10,000 skills)
        for n, (doc, chunk) in enumerate(zip(docs, chunks)):
            own = {"docs": docs, "number": n + 1, key: chunk, **values}
            shown = tuple(keys[s.id] if isinstance(s, SkillInfo) else s for s in chunk)
            add_own(doc, template, (shared, n + 1, shown), lambda own=own: own)
        return docs

    all_docs = add_paged("all", "pages/all.md.j2", model.skills, PAGE_SIZE, "skills", total=len(model.skills))
    add("index.md", "pages/home.md.j2", all_docs=all_docs)
    add("collections/index.md", "pages/collections.md.j2")
    for c in model.collections:
        children = {p: collections_by_path[p] for p in c.children}  # (the tree one level deep)
        add_paged(collection_doc(c.path).rsplit("/", 1)[0], "pages/collection.md.j2",
                  tuple(by_id[i] for i in c.skills), PAGE_SIZE, "skills", collection=c, collections_by_path=children)
    _skill_pages(model, add_own, keys, install, repr(install))
    # (each repository's published skills counted once here: a filter over 10,000 skills per repository
    # in the template took a tenth of a second of every rebuild)
    add("provenance/index.md", "pages/provenance.md.j2", published=Counter(s.repository for s in model.skills))
    rules, groups = lint_views(model)
    add("lint/index.md", "pages/lint.md.j2", lint_rules=rules, lint_groups=groups)
    for view in (*rules, *groups):
        # Each row says whether its skill has a page (a lookup per row: no list of IDs per page).
        rows = tuple({**r, "published": bool(r.get("skill")) and r["skill"] in by_id} for r in view["rows"])
        add_paged(view["folder"], "pages/lint_findings.md.j2", rows, FINDINGS_PAGE, "rows",
                  title=view["title"], total=len(rows))
    if model.memory is not None:
        _memory_pages(model, add)
    add("search/index.md", "pages/search.md.j2", memory=model.memory is not None)
    plan.update(catalog_plan(model))
    plan.update((rel, _fixed(text)) for rel, text in _frame_files(model, options, env).items())
    return plan


def project_files(model: SiteModel, options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Every generated file of the mkdocs project as text (``project_plan``, all rendered)."""
    return {rel: planned.render() for rel, planned in project_plan(model, options).items()}


def _frame_files(model: SiteModel, options: Mapping[str, Any], env) -> dict[str, str]:
    """``mkdocs.yml`` and the lists every page's rendering reads (``markdown_safe``)."""
    nav = [("Home", "index.md"), ("All skills", "all/index.md"), ("Collections", "collections/index.md"),
           ("Provenance", "provenance/index.md"), ("Lint", "lint/index.md"),
           *([("Memory", "memory/index.md")] if model.memory is not None else []), ("Search", "search/index.md")]
    files: dict[str, str] = {}
    # What the bundle publishes below api/files/: markdown_safe links a body's relative link or image
    # only to one of these (a file left out, a folder, a withheld or excluded skill's file was a 404).
    files[PUBLISHED_LIST] = "".join(sorted(f"{s.id}/{f.path}\n" for s in model.skills for f in s.files))
    # ...and a link to a supporting file that has a page of its own opens that page.
    files[PAGES_LIST] = "".join(sorted(f"{s.id}/{t.path}\t{url_path(text_doc(s.id, t.path)[:-len('index.md')])}\n"
                                       for s in model.skills for t in s.texts))
    files["mkdocs.yml"] = env.get_template("mkdocs.yml.j2").render(
        model=model, nav=nav, site_name=options.get("site_name", "Skills"), site_url=options.get("site_url") or "",
        page=Page("mkdocs.yml"), markdown_extensions=yaml_entries(PUBLISHED_LIST, PAGES_LIST))
    return files


def _skill_pages(model: SiteModel, add_own, keys: Mapping[str, str], install: Install, install_key: str) -> None:
    titles = skill_titles(model)
    for s in model.skills:
        doc = skill_doc(s.id)
        # The title goes to site/overrides/main.html as page.meta.skillc_title (escaped there), not
        # as mkdocs' `title`, which material prints unescaped; the page's H1 stays the name.
        add_own(doc, "pages/skill.md.j2", (keys[s.id], titles[s.id], install_key), lambda s=s, doc=doc: dict(
            skill=s, body=body_markdown(s, Page(doc)), meta=front_matter(skillc_title=titles[s.id]),
            text_paths={t.path for t in s.texts}, install=install))
        for t in s.texts:
            tdoc = text_doc(s.id, t.path)
            add_own(tdoc, "pages/text.md.j2", (keys[s.id], titles[s.id], t.path),
                    lambda s=s, t=t, tdoc=tdoc: _text_values(s, t, tdoc, titles[s.id]))


def _text_values(s: SkillInfo, t: TextPage, doc: str, title: str) -> dict[str, Any]:
    view = s.provenance.view_url if s.provenance else ""
    source = view[:-len(url_path(s.main_file))] + url_path(t.path) if view else ""
    return dict(skill=s, text=t, content=text_markdown(s, t, Page(doc)), source_url=source,
                meta=front_matter(skillc_title=f"{title_text(t.path)} ({title})"))


def _memory_pages(model: SiteModel, add) -> None:
    entries = tuple(e for e in model.memory.entries if e.get("status", "active") == "active")
    views = [("memory", "All", entries)]
    for cat, label, _ in CATEGORIES:
        views.append((f"memory/{cat}", label, tuple(
            e for e in entries if e.get("type") == "semantic" and (e.get("category") or "fact") == cat)))
    views.append(("memory/episodic", "Episodes", tuple(e for e in entries if e.get("type") == "episodic")))
    views.append(("memory/procedural", "Procedures", tuple(e for e in entries if e.get("type") == "procedural")))
    filters = [(label, f"{prefix}/index.md", len(items)) for prefix, label, items in views]
    for prefix, label, items in views:  # (rendered now: they read the model's memory counts)
        chunks = _chunks_of(items, MEMORY_PAGE)
        docs = [paged_doc(prefix, n + 1) for n in range(len(chunks))]
        for n, (doc, chunk) in enumerate(zip(docs, chunks)):
            add(doc, "pages/memory.md.j2", docs=docs, number=n + 1, entries=chunk, label=label, filters=filters,
                total=len(items))
