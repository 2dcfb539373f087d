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
  ``````), whose HTML ``fenced_code`` stores aside instead of in the element tree: a block with
  the ID ``__config`` would come before material's own ``<script id="__config">`` and hand the
  theme the skill's settings (its base URL, instant navigation).
* **Relative links of a skill body** point at the bundle's copy of the skill's files: a page that
  defines the reference ``[skillc-files]: <url>`` (the site generator writes it after the body, so
  it wins over any definition in the body) gets ``references/x.md`` rewritten to
  ``<url>references/x.md``; ``{baseDir}/references/x.md`` (Claude's placeholder for the skill's
  folder) is read as ``references/x.md``.  With the option ``published`` (a file listing the
  bundle's files under ``api/files/``, one a line), a link or image whose target is not among them
  (a file left out of the corpus, a folder, a withheld file, an excluded skill's) becomes a
  ``span.skillc-missing-link`` holding its text: the site links only what it publishes.
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
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor, UnescapeTreeprocessor

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
BADGES = frozenset({"[PREF]", "[CONV]", "[PATN]", "[WARN]", "[FACT]", "[EPIS]", "[PROC]"})
FILES_REFERENCE = "skillc-files"
FILES_DIR = "api/files/"  # where the bundle keeps each skill's files (the reference points below it)
_ALLOWED_ATTRS = frozenset({"href", "src", "alt", "title", "id", "class", "start", "align", "style"})
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]+")
_ALIGN_STYLE = re.compile(r"^\s*text-align:\s*(left|right|center)\s*;?\s*$")
_RESERVED_ID = re.compile(r"^(__|md-|h-)", re.IGNORECASE)
_STASHED_ID = re.compile(r'(<[a-z]+\b[^<>]*?\sid=")([^"]*)"')  # (fenced_code escapes the value: no '"')
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


_published_cache: dict[tuple[str, int], frozenset[str]] = {}


def _published(path: str) -> frozenset[str] | None:
    """The listing ``published`` names, read once (mkdocs renders every page with it); keyed by its
    full path and mtime, so a process that builds two projects never reads the first one's."""
    if not path:
        return None
    file = Path(path).resolve()
    key = (str(file), file.stat().st_mtime_ns)
    if key not in _published_cache:
        text = file.read_text(encoding="utf-8")
        _published_cache[key] = frozenset(line for line in text.split("\n") if line)
    return _published_cache[key]


class SafeTreeprocessor(Treeprocessor):
    def __init__(self, md: Markdown, published: str = "") -> None:
        super().__init__(md)
        self.published = published

    def run(self, root: etree.Element) -> None:
        ref = self.md.references.get(FILES_REFERENCE) if hasattr(self.md, "references") else None
        base = ref[0] if ref else None
        if base is not None and not safe_url(base):
            base = None
        published = _published(self.published) if base is not None else None
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
                    if base is not None:
                        rebased = rebase(value, base)
                        target = bundle_target(rebased, base) if rebased != value else None
                        value = el.attrib[name] = rebased
                        if published is not None and target is not None and target not in published:
                            _unlinked(el, target)  # (the bundle has no such file: a link would be a 404)
                            break
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
        _fix_toc(getattr(self.md, "toc_tokens", None) or ())


class SafeStashPreprocessor(Preprocessor):
    """Runs after ``fenced_code``: the IDs in the HTML it stored aside get the same ``h-`` prefix
    rule as the element tree's (raw HTML never reaches the stash: ``html_block`` is removed)."""

    def run(self, lines: list[str]) -> list[str]:
        blocks = self.md.htmlStash.rawHtmlBlocks
        for i, block in enumerate(blocks):
            if isinstance(block, str) and " id=" in block:
                blocks[i] = _STASHED_ID.sub(_prefixed_id, block)
            if isinstance(block, str):  # (fenced code is stashed HTML: the tree pass never sees it)
                blocks[i] = visible_bidi(blocks[i])
        return lines


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
# Bidirectional embeddings, overrides and isolates reorder the text after them: "\u202eevil" reads
# "live".  Untrusted text shows them as their code points instead (search.js does the same).
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible_bidi(text: str) -> str:
    """``text`` with each bidirectional control shown as ``[U+202E]``, so it cannot disguise text."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", text) if _BIDI.search(text) else text


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


class SafeExtension(Extension):
    def __init__(self, **kwargs) -> None:
        self.config = {"published": ["", "a file listing the paths below api/files/ the bundle "
                                         "publishes, one a line (others are not linked)"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        if "html_block" in md.preprocessors:
            md.preprocessors.deregister("html_block")
        if "html" in md.inlinePatterns:
            md.inlinePatterns.deregister("html")
        # After inline patterns (20) and toc (5), before mkdocs' own link rewriting (0).
        md.treeprocessors.register(SafeTreeprocessor(md, self.getConfig("published")), "skillc_safe", 2)
        # Right after fenced_code (25), before anything reads the stash.
        md.preprocessors.register(SafeStashPreprocessor(md), "skillc_safe_stash", 24)


def makeExtension(**kwargs) -> SafeExtension:
    return SafeExtension(**kwargs)
