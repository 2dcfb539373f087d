"""A Python-Markdown extension that makes hostile Markdown (skill bodies, descriptions, memories)
safe to publish: ``markdown_extensions: [skillc.emit.docsite.markdown_safe]`` in ``mkdocs.yml``.

* **No raw HTML.**  Python-Markdown passes raw HTML through; this extension removes the block
  preprocessor (``html_block``) and the inline pattern (``html``) that do it, so ``<script>``,
  ``<img onerror=…>`` and friends are text (the serializer writes ``&lt;``).  This is the approach
  Python-Markdown's own release notes give for the removed ``safe_mode``.
* **No script URLs.**  Every ``href``/``src`` is checked after unescaping (Markdown escapes, HTML
  entities, control characters and spaces removed): only ``http``, ``https`` and ``mailto`` schemes,
  and scheme-less (relative) URLs, are kept; anything else (``javascript:``, ``data:``,
  ``vbscript:``, ``file:``…) turns the link or image into a ``span.skillc-unsafe-link`` holding its text.
* **Attribute allow-list.**  Only ``href src alt title id class start align`` and a table cell's
  ``style="text-align: …"`` survive; element IDs that could shadow the theme's own (``__…``,
  ``md-…``) are prefixed with ``h-``.  That holds for fenced code blocks too (`````` ``` {#__config}
  ``````), whose HTML the fence extension stores aside instead of in the element tree: a block with
  the ID ``__config`` would come before material's own ``<script id="__config">`` and hand the
  theme the skill's settings (its base URL, instant navigation).  An in-page link to a renamed
  ID (``#md-setup``) follows it (``#h-md-setup``).
* **GitHub's list columns.**  List items indented as CommonMark reads them (a fence 2 or 3 spaces
  in) are re-indented to Python-Markdown's 4 (``skillc.emit.docsite.lists``), so fences in lists stay code.
* **A complete table of contents.**  A body that opens with its own H1 keeps its sections in the
  page's contents (material shows only the first H1's children).
* **Relative links of a skill body** point at the bundle's copy of the skill's files: a page that
  defines the reference ``[skillc-files]: <url>`` (the site generator writes it after the body, so
  it wins over any definition in the body) gets ``references/x.md`` rewritten to
  ``<url>references/x.md``; ``{baseDir}/references/x.md`` (Claude's placeholder for the skill's
  folder) is read as ``references/x.md``.  With the option ``published`` (a file listing the
  bundle's files under ``api/files/``, one a line), a link or image whose target is not among them
  (a file left out of the corpus, a folder, a withheld file, an excluded skill's) becomes a
  ``span.skillc-missing-link`` holding its text: the site links only what it publishes.  With
  ``pages`` (``path<TAB>page URL`` lines), a link to a file that has a page of its own (a
  reference) opens that page rather than the raw file.
* **Generated HTML, on generated pages only.**  A page whose front matter (written by the site's own
  templates: skill text never reaches it) sets ``TRUSTED_HTML_META`` may hold HTML between lines
  that are exactly ``HTML_START`` and ``HTML_END``: the list pages' skill cards, rendered by an
  autoescaping template (``site/pages/_cards.html.j2``), so every value in them is text.  That
  HTML is passed through as a block instead of parsed as Markdown (Python-Markdown's inline
  processing of long lists was most of a rebuild's page rendering).  The renderer tells this
  extension about the page (``trusted_html``); on any other page, and in any other renderer, the
  lines are text like any raw HTML.  On those pages every other value is escaped Markdown (``pages.md``),
  which cannot start a line with ``<``, so it cannot open or close such a block.
* **Badges.**  An inline code span that is exactly ``[PREF]`` ``[CONV]`` ``[PATN]`` ``[WARN]``
  ``[FACT]`` ``[EPIS]`` ``[PROC]`` gets the classes ``skillc-badge skillc-badge-<name>`` (seed 000's
  memory tab colours, in ``assets/skillc/site.css``).  Cosmetic only: content may use them too.
"""

from __future__ import annotations

import html
import posixpath
import re
import xml.etree.ElementTree as etree
from pathlib import Path
from urllib.parse import unquote

from markdown import Markdown
from markdown.extensions import Extension
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor, UnescapeTreeprocessor

from .lists import reindent
from .markers import FILES_DIR, FILES_REFERENCE, HTML_END, HTML_START, TRUSTED_HTML_META, visible_bidi

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
BADGES = frozenset({"[PREF]", "[CONV]", "[PATN]", "[WARN]", "[FACT]", "[EPIS]", "[PROC]"})
TRUSTED_FLAG = "skillc_trusted_html"  # (the attribute of the Markdown instance ``trusted_html`` sets)
_ALLOWED_ATTRS = frozenset({"href", "src", "alt", "title", "id", "class", "start", "align", "style"})
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]+")
_ALIGN_STYLE = re.compile(r"^\s*text-align:\s*(left|right|center)\s*;?\s*$")
_RESERVED_ID = re.compile(r"^(__|md-|h-)", re.IGNORECASE)
_STASHED_ID = re.compile(r'(<[a-z]+\b[^<>]*?\sid=")([^"]*)"')  # (fence extensions escape the value: no '"')
_unescape = UnescapeTreeprocessor().unescape
# Claude's placeholder for the skill's own folder, which skills write in links (`{baseDir}/references/x.md`).
_BASE_DIR = re.compile(r"^\$?\{baseDir\}/+")


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see in ``url`` (lower-cased), or None for a relative URL."""
    plain = html.unescape(_unescape(url))
    plain = _INVISIBLE.sub("", plain)
    m = _SCHEME.match(plain)
    return m.group(1).lower() if m else None


def safe_url(url: str) -> bool:
    scheme = url_scheme(url)
    return scheme is None or scheme in SAFE_SCHEMES


def rebase(url: str, base: str) -> str:
    """``url`` (relative to a skill's folder) made relative to ``base`` (the skill's files in the
    bundle).  Absolute paths, fragments, queries and protocol-relative URLs are left alone."""
    plain = _unescape(url)
    if _BASE_DIR.match(plain):
        url = plain = _BASE_DIR.sub("", plain)
    if not plain or plain.startswith(("#", "/", "?", "\\")) or url_scheme(plain) is not None:
        return url
    m = re.search(r"[?#]", plain)
    path, rest = (plain[:m.start()], plain[m.start():]) if m else (plain, "")
    path = posixpath.normpath(path) if path else path
    if path in (".", ""):
        return url
    if path.startswith(".."):
        # Up and into a sibling skill (`../other/notes.md`): the bundle keeps every skill's files
        # under api/files/<its ID>/, in the repository's layout, so the link is followed there.
        # Above the repository's skills it stays as the author wrote it.
        files_root, sep, skill_id = base.rpartition(FILES_DIR)
        target = posixpath.normpath(f"{skill_id.rstrip('/')}/{path}") if sep else ".."
        if target == "." or target.startswith(".."):
            return url
        return files_root + FILES_DIR + target + rest
    return base + path + rest


def bundle_target(url: str, base: str) -> str | None:
    """The file below ``api/files/`` that ``url`` (already rebased onto ``base``) names, decoded, or
    None when it is not a link into the bundle's files."""
    files_root = base.rpartition(FILES_DIR)[0] + FILES_DIR
    if not url.startswith(files_root):
        return None
    return unquote(re.split(r"[?#]", url[len(files_root):], maxsplit=1)[0])


_listing_cache: dict[tuple[str, int], dict[str, str]] = {}


def _listing(path: str) -> dict[str, str] | None:
    """A listing file's lines (``key`` or ``key<TAB>value``), read once (mkdocs renders every page
    with it); keyed by its full path and mtime, so a process that builds two projects never reads
    the first one's."""
    if not path:
        return None
    file = Path(path).resolve()
    key = (str(file), file.stat().st_mtime_ns)
    if key not in _listing_cache:
        text = file.read_text(encoding="utf-8")
        _listing_cache[key] = dict((line.split("\t", 1) + [""])[:2] for line in text.split("\n") if line)
    return _listing_cache[key]


class SafeTreeprocessor(Treeprocessor):
    def __init__(self, md: Markdown, published: str = "", pages: str = "") -> None:
        super().__init__(md)
        self.published = published
        self.pages = pages

    def run(self, root: etree.Element) -> None:
        ref = self.md.references.get(FILES_REFERENCE) if hasattr(self.md, "references") else None
        base = ref[0] if ref else None
        if base is not None and not safe_url(base):
            base = None
        published = _listing(self.published) if base is not None else None
        pages = _listing(self.pages) if base is not None else None
        for el in root.iter():
            if el.text:
                el.text = visible_bidi(el.text)
            if el.tail:
                el.tail = visible_bidi(el.tail)
            for name in list(el.attrib):
                value = el.attrib[name]
                if name not in _ALLOWED_ATTRS or (name == "style" and not _ALIGN_STYLE.match(value)):
                    del el.attrib[name]
                elif name in ("href", "src"):
                    if name == "href" and value.startswith("#") and _RESERVED_ID.match(value[1:]):
                        value = el.attrib[name] = "#h-" + value[1:]  # (the heading it names was renamed)
                    if base is not None:
                        rebased = rebase(value, base)
                        target = bundle_target(rebased, base) if rebased != value else None
                        value = el.attrib[name] = rebased
                        if published is not None and target is not None and target not in published:
                            _unlinked(el, target)  # (the bundle has no such file: a link would be a 404)
                            break
                        if pages and el.tag == "a" and target in pages:  # (the file's own page, not raw text)
                            fragment = rebased[rebased.index("#"):] if "#" in rebased else ""
                            value = el.attrib[name] = base.rpartition(FILES_DIR)[0] + pages[target] + fragment
                    if not safe_url(value):
                        _neutralise(el)
                        break
                elif name == "id" and _RESERVED_ID.match(value):
                    el.attrib[name] = "h-" + value
                elif name in ("title", "alt"):  # (shown as tooltips: no text reordering there either)
                    el.attrib[name] = visible_bidi(value)
            if el.tag == "img" and _REMOTE.match(el.get("src", "")):
                _as_link(el)  # (the site's CSP loads images from itself only: a remote one would be broken)
            if el.tag == "code" and not len(el) and (el.text or "") in BADGES:
                el.set("class", "skillc-badge skillc-badge-" + el.text.strip("[]").lower())
        tokens = getattr(self.md, "toc_tokens", None)
        if tokens:
            _fix_toc(tokens)
            _nest_titles(tokens)


class SafeStashPostprocessor(Postprocessor):
    """Runs before the stashed HTML is put back: the IDs in the HTML fenced code stored aside
    (top-level blocks and blocks inside list items alike) get the same ``h-`` prefix rule as the
    element tree's (raw HTML never reaches the stash: ``html_block`` is removed)."""

    def run(self, text: str) -> str:
        # (toc runs every postprocessor on each heading's text too: a block is changed only once)
        stash = self.md.htmlStash
        blocks = stash.rawHtmlBlocks
        start = getattr(stash, "skillc_safe_done", 0)
        stash.skillc_safe_done = len(blocks)
        for i, block in enumerate(blocks[start:], start):
            if isinstance(block, str) and " id=" in block:
                blocks[i] = _STASHED_ID.sub(_prefixed_id, block)
            if isinstance(block, str):  # (fenced code is stashed HTML: the tree pass never sees it)
                blocks[i] = visible_bidi(blocks[i])
        return text


class ListIndentPreprocessor(Preprocessor):
    """GitHub's list-item columns read as Python-Markdown's (``skillc.emit.docsite.lists``)."""

    def run(self, lines: list[str]) -> list[str]:
        return reindent(lines)


class TrustedHtmlPreprocessor(Preprocessor):
    """Each generated HTML block of a trusted page stashed whole (see the module); ``trusted_html``
    says whether the page being converted is one (set by the renderer before each conversion)."""

    def run(self, lines: list[str]) -> list[str]:
        if not getattr(self.md, TRUSTED_FLAG, False) or HTML_START not in lines:
            return lines
        out: list[str] = []
        block: list[str] | None = None
        for line in lines:
            if block is None:
                if line == HTML_START:
                    block = []
                else:
                    out.append(line)
            elif line == HTML_END:
                out.extend(("", self.md.htmlStash.store("\n".join(block)), ""))
                block = None
            else:
                block.append(line)
        return out if block is None else [*out, HTML_START, *block]  # (unclosed: left as text)


def trusted_html(md: Markdown, meta) -> None:
    """Tell the extension whether the page about to be converted (its front matter ``meta``) is one
    the site's templates marked as holding generated HTML (``TRUSTED_HTML_META``)."""
    setattr(md, TRUSTED_FLAG, bool(meta) and meta.get(TRUSTED_HTML_META) is True)


def _prefixed_id(m: re.Match[str]) -> str:
    value = m.group(2)
    return f'{m.group(1)}h-{value}"' if _RESERVED_ID.match(html.unescape(value)) else m.group(0)


def _neutralise(el: etree.Element) -> None:
    """An ``a``/``img`` with a script URL becomes a ``span`` (mkdocs expects every ``a`` to have an href)."""
    alt = el.get("alt") if el.tag == "img" else None
    el.attrib.clear()
    el.tag = "span"
    el.set("class", "skillc-unsafe-link")
    el.set("title", "link removed: unsafe URL scheme")
    if alt:
        el.text = alt


def _unlinked(el: etree.Element, target: str) -> None:
    """A link or image to a file the bundle does not publish becomes a ``span`` with its text."""
    alt = el.get("alt") if el.tag == "img" else None
    el.attrib.clear()
    el.tag = "span"
    el.set("class", "skillc-missing-link")
    el.set("title", visible_bidi(f"not published in this bundle: {target}"))
    if alt:
        el.text = alt


_REMOTE = re.compile(r"(?i)\s*(https?:|//)")  # (`https:/host/x` too: browsers read it as https://host/x)
def _as_link(el: etree.Element) -> None:
    """A remote image becomes a link to it, named by its alt text (the site fetches nothing from
    another host, so the reader chooses to open it)."""
    src, alt = el.get("src", ""), el.get("alt") or ""
    el.attrib.clear()
    el.tag = "a"
    el.set("href", src)
    el.set("title", "remote image, not loaded by this site")
    el.text = visible_bidi(f"image: {alt}" if alt else "image")


def _fix_toc(tokens) -> None:
    """The table of contents (built by ``toc`` before this runs) links to the renamed IDs."""
    for token in tokens:
        if _RESERVED_ID.match(token.get("id", "")):
            token["id"] = "h-" + token["id"]
        _fix_toc(token.get("children", ()))


def _nest_titles(tokens: list) -> None:
    """A body that opens with its own H1 follows the page's H1: material's sidebar shows only the
    first H1's children, so later H1s (and their sections) go under it instead of vanishing."""
    if len(tokens) > 1 and tokens[0].get("level") == 1:
        later = tokens[1:]
        del tokens[1:]
        tokens[0].setdefault("children", []).extend(later)


class SafeExtension(Extension):
    def __init__(self, **kwargs) -> None:
        self.config = {"published": ["", "a file listing the paths below api/files/ the bundle "
                                         "publishes, one a line (others are not linked)"],
                       "pages": ["", "a file listing the paths below api/files/ that have a page of their "
                                     "own, each with its URL from the site root after a tab"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        if "html_block" in md.preprocessors:
            md.preprocessors.deregister("html_block")
        if "html" in md.inlinePatterns:
            md.inlinePatterns.deregister("html")
        # After inline patterns (20) and toc (5), before mkdocs' own link rewriting (0).
        md.treeprocessors.register(SafeTreeprocessor(md, self.getConfig("published"), self.getConfig("pages")), "skillc_safe", 2)
        # Before the stash is put back (raw_html, 30), after every block that fills it.
        md.postprocessors.register(SafeStashPostprocessor(md), "skillc_safe_stash", 35)
        # After whitespace is normalised (30), before fences are found (25).
        md.preprocessors.register(ListIndentPreprocessor(md), "skillc_list_indent", 29)
        # After whitespace is normalised (30), before the lists are re-indented (29).
        md.preprocessors.register(TrustedHtmlPreprocessor(md), "skillc_trusted_html", 29.5)


def makeExtension(**kwargs) -> SafeExtension:
    return SafeExtension(**kwargs)
