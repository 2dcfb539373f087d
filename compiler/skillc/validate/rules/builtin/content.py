"""Body, links, references and secrets (codes B7xx).

Cost matters (lint must stay within 2x of read + hash + YAML parse): every rule first checks a
cheap condition on the text it already has (``"](" in body``, the body length); the skill folder
is listed once per skill (``skill_files``), never followed through symbolic links, and files are
read with a size cap.
"""

from __future__ import annotations

import bisect
import functools
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from .... import secrets
from ....discover.walk import MAX_LISTED_FILES, RESOURCE_DIRS, SKILL_FILE_NAMES, SKIP_DIRS
from ....model import ItemKind, Position, Severity
from ....secrets import SECRET_RULE
from ....textscan import contains
from ..registry import Finding, RuleContext, rule

REC = frozenset({"recommended"})
REC_SPEC = frozenset({"recommended", "spec"})
SKILL = frozenset({ItemKind.SKILL})
SKILL_AND_LIGHT = frozenset({ItemKind.SKILL, ItemKind.LIGHTWEIGHT})

MAX_SCANNED_FILES = 200  # text files scanned for secrets per skill
MAX_SCAN_BYTES = 1024 * 1024  # bytes read per file for the secret scan and reference parsing
MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdx")


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: ASCII text at 4 characters a token, other characters one each.

    BPE tokenizers (cl100k, o200k) average about 4 characters per token on English prose and
    code; CJK and other non-Latin scripts run near one token per character, where chars/4 would
    undercount fourfold.  Counting is done in C (``isascii``, ``encode``) so it costs a few
    microseconds per file.
    """
    if text.isascii():
        return (len(text) + 3) // 4
    ascii_len = len(text.encode("ascii", "ignore"))
    return (ascii_len + 3) // 4 + (len(text) - ascii_len)


# ------------------------------------------------------------------------------ skill folder


@dataclass(frozen=True, slots=True)
class SkillFiles:
    files: frozenset[str]  # posix paths relative to the skill folder (symbolic links included, as names)
    dirs: frozenset[str]
    links: frozenset[str]  # the files that are symbolic links: never read
    truncated: bool
    base: str  # the skill folder's absolute path

    def size(self, rel: str) -> int:
        """A file's size in bytes (0 for a link or a file that is gone); stat on demand: few rules ask."""
        if rel in self.links:
            return 0
        try:
            return os.lstat(os.path.join(self.base, rel)).st_size
        except OSError:
            return 0


_cache: list = [None, None]  # (key, document) → SkillFiles; one entry: rules run skill by skill


def _skill_path(ctx: RuleContext) -> str:
    """The skill folder as a string (``str(ctx.skill_dir)`` without building a pathlib object)."""
    root = str(ctx.root)
    return os.path.join(root, ctx.item.skill_dir) if ctx.item.skill_dir else root


def skill_files(ctx: RuleContext) -> SkillFiles:
    """The regular files and folders of a skill (nested skills' subtrees and VCS/build folders skipped):
    discovery's listing when it has one, else the folder is listed here."""
    cached = _cache[0]
    # (the document first: every rule of a file asks, ~5 times a file, and it nearly always is the same)
    if cached is not None and cached[1] is ctx.document and cached[0] == (str(ctx.root), ctx.item.skill_dir):
        return _cache[1]
    key = (str(ctx.root), ctx.item.skill_dir)
    base = _skill_path(ctx)
    listing = ctx.item.listing
    if listing is not None:
        files, dirs, links = listing
        result = SkillFiles(frozenset(files).union(links), frozenset(dirs).union(("",)), frozenset(links), False, base)
    else:
        result = _list_skill(base)
    _cache[0], _cache[1] = (key, ctx.document), result
    return result


def _list_skill(base: str) -> SkillFiles:
    files: set[str] = set()
    dirs: set[str] = {""}
    links: set[str] = set()
    truncated = False
    stack = [""]
    while stack and not truncated:
        rel = stack.pop()
        try:
            it = os.scandir(os.path.join(base, rel) if rel else base)
        except OSError:
            continue
        with it:
            entries = sorted(it, key=lambda e: e.name)
        if rel and any(e.name in SKILL_FILE_NAMES for e in entries) and rel.partition("/")[0] not in RESOURCE_DIRS:
            dirs.add(rel)
            continue  # a nested skill: its files are its own (a SKILL.md under assets/ is a fixture: listed)
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIP_DIRS:
                        dirs.add(child)
                        stack.append(child)
                elif e.is_file(follow_symlinks=False):
                    files.add(child)
                elif e.is_symlink():
                    files.add(child)  # a link exists as a name; discovery reports where it leads
                    links.add(child)
            except OSError:
                continue
            if len(files) >= MAX_LISTED_FILES:
                truncated = True
                break
    return SkillFiles(frozenset(files), frozenset(dirs), frozenset(links), truncated, base)


def read_text(path: str) -> str | None:
    """Up to MAX_SCAN_BYTES of a file as text, or None for binary/unreadable files."""
    try:
        # os.open + os.read: a third of the cost of open().read() on the small files skills hold
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the run
    except OSError:
        return None
    try:
        raw = os.read(fd, MAX_SCAN_BYTES)
        while 0 < len(raw) < MAX_SCAN_BYTES and (more := os.read(fd, MAX_SCAN_BYTES - len(raw))):
            raw += more
    except OSError:
        return None
    finally:
        os.close(fd)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with a byte-order mark (Windows PowerShell's default)
        return raw.decode("utf-16", "replace")
    if b"\0" in raw[:8192]:
        return None
    return raw.decode("utf-8", "replace")


_texts: list = [None, {}]  # (document, {rel: text}): B706 and B707 read a skill's files once


def skill_text(ctx: RuleContext, rel: str) -> str | None:
    """``read_text`` of a file of the skill, remembered while the rules look at the same document."""
    if _texts[0] is not ctx.document:
        _texts[0], _texts[1] = ctx.document, {}
    cache = _texts[1]
    if rel not in cache:
        cache[rel] = read_text(os.path.join(_skill_path(ctx), rel))
    return cache[rel]


# ------------------------------------------------------------------------------------- links

# A fence line: any indentation, since a list item's fence sits at its content's column ("1. Run:" then
# a 4-space ```): a top-level line indented 4 or more is an indented code block, code all the same.
_FENCE_LINES = re.compile(r"^([ \t]*)(`{3,}|~{3,})", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
# Where a paragraph ends: a blank line, or a line that opens another block (a list item, a
# heading, a quote, a table row): a code span never pairs backticks across it.
_BLOCK_BREAK = re.compile(r"\n(?:[ \t\r]*\n|[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#{1,6}[ \t]|>|\|))")
_LONE_CR = re.compile(r"\r(?!\n)")
# An image's `!` is not part of the pattern: only group 1 is used, and a pattern that opens with a
# literal `[` lets the regex engine skip ahead to each `[` (10x faster on long bodies).
_INLINE_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
# A definition's destination ends its line or is followed by a title: "[Name]: a short description"
# is text (CommonMark), not a link to "a"; the destination may start on the next line, not after a blank one.
_REF_DEF = re.compile(r"^ {0,3}\[(?!\^)[^\]]+\]:[ \t]*(?:\r?\n)?[ \t]*(<[^>\n]*>|\S+)"
                      r"(?=[ \t\r]*(?:\n|\Z)|[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^)]*\))[ \t\r]*(?:\n|\Z))", re.MULTILINE)
_REF_DEF_START = re.compile(r"\n {0,3}\[")  # where a definition can start: a fast literal scan
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Templating, not a path: `{…}`, `$VAR`, `<…>`, a `%` that is not a percent-encoding (`%VAR%`, `%s`)
_PLACEHOLDER = re.compile(r"[{}$<>]|%(?![0-9A-Fa-f]{2})|\bbaseDir\b")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


@dataclass(frozen=True, slots=True)
class Link:
    target: str  # as written
    path: str  # decoded path without fragment/query
    line: int  # 1-based within the scanned text
    column: int


def _blank(text: str) -> str:
    """``text`` with every character but newlines replaced by a space."""
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(line) for line in text.split("\n"))


def _fence_lines(text: str) -> Iterator[re.Match[str]]:
    """``_FENCE_LINES.finditer(text)``, trying the pattern only on lines with ``` or ~~~ after their
    indentation (a multi-line ``^`` pattern would be tried at every character)."""
    starts = set()
    for marker in ("```", "~~~"):
        pos = text.find(marker)
        while pos >= 0:
            line_start = text.rfind("\n", 0, pos) + 1
            if pos == line_start or not text[line_start:pos].strip(" \t"):
                starts.add(line_start)
            pos = text.find(marker, pos + 3)  # an occurrence starting before pos + 3 is on this line
    for line_start in sorted(starts):
        m = _FENCE_LINES.match(text, line_start)
        if m:
            yield m


def _mask_fences(text: str) -> str:
    """``text`` with its fenced code blocks blanked (``fence_blocks``)."""
    blocks = fence_blocks(text)
    if not blocks:
        return text
    parts, pos = [], 0
    for start, end in blocks:
        parts.append(text[pos:start])
        parts.append(_blank(text[start:end]))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def fence_blocks(text: str) -> list[tuple[int, int]]:
    """The fenced code blocks of ``text`` as offset ranges.  Fence lines found by one multi-line
    search; a block runs from its opening line to the closing line (at least as many of the same
    character and nothing else, indented at most 3 more than the opening one), or to the end."""
    blocks: list[tuple[int, int]] = []
    fence: str | None = None
    start = indent = 0
    for m in _fence_lines(text):
        if fence is None:
            if m.group(2)[0] == "`":
                end = text.find("\n", m.end())
                if "`" in text[m.end() : len(text) if end < 0 else end]:
                    continue  # (CommonMark: a backtick fence's info has no backtick; "```js``` inline" is text)
            fence = m.group(2)[0] * len(m.group(2))
            start, indent = m.start(), len(m.group(1))
        elif m.group(2).startswith(fence) and len(m.group(1)) <= indent + 3:
            end = text.find("\n", m.end())
            if text[m.end() : len(text) if end < 0 else end].strip():
                continue  # (a closing fence has nothing after it: ```python inside a block is code)
            fence = None
            blocks.append((start, len(text) if end < 0 else end))
    if fence is not None:
        blocks.append((start, len(text)))
    return blocks


def code_spans(text: str) -> list[tuple[int, int]]:
    """The code spans of ``text`` as CommonMark pairs them: a span opens at a whole run of
    backticks and closes at the next run of exactly as many, within its paragraph (no blank line,
    list item, heading, quote or table row between); an opening run with no such closer is text.  One unmatched backtick ("`scripts/a.py
    to start") must not pair with a span paragraphs later and hide the links between.

    Backtick runs are found by one search and paired by length (a regex pairing them is retried
    at every character of every span: most of a lint's time on a body full of code spans).
    """
    runs = [m.span() for m in _BACKTICKS.finditer(text)]
    if len(runs) < 2:
        return []
    following: list[int] = [0] * len(runs)  # the index of the next run of the same length, or 0
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        n = runs[i][1] - runs[i][0]
        following[i] = last.get(n, 0)
        last[n] = i
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        j = following[i]
        # (a block break between: the closer is in another paragraph; the break ends before the
        # closer's backticks, so the search stops there)
        if j and (text.find("\n", runs[i][1], runs[j][0]) < 0
                  or not _BLOCK_BREAK.search(text, runs[i][1], runs[j][0])):
            spans.append((runs[i][0], runs[j][1]))
            i = j + 1
        else:
            i += 1  # (its closer is past a blank line, or there is none: the run is text)
    return spans


def _mask_spans(text: str) -> str:
    """``text`` with its code spans blanked (offsets and newlines kept)."""
    spans = code_spans(text)
    if not spans:
        return text
    parts, pos = [], 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(_blank(text[start:end]))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def _mask_code(text: str, spans: bool = True) -> str:
    """Blank out fenced code blocks, code spans (unless ``spans`` is False) and HTML comments,
    keeping offsets (newlines kept)."""
    if "`" not in text and not contains(text, "~~~") and not contains(text, "<!--"):
        return text
    # Fences first: a block is code whatever it holds (an HTML snippet's `<!-- header` opens no comment).
    masked = _mask_fences(text) if contains(text, "```") or contains(text, "~~~") else text
    comments = contains(masked, "<!--")
    spanless = _mask_spans(masked) if (spans or comments) and "`" in masked else masked
    out = spanless if spans else masked
    if not comments:
        return out
    # HTML comments open outside code spans (a `<!--` in one is code, as CommonMark reads whichever
    # opens first) and close at the first `-->`; an unclosed one opening a line is an HTML block, to
    # the end, while one within a line is text (it used to hide every link after "Write `<!--`").
    parts, pos = [], 0
    i = spanless.find("<!--")
    while i >= 0:
        end = masked.find("-->", i + 4)
        if end >= 0:
            end += 3
        elif masked[masked.rfind("\n", 0, i) + 1 : i].strip():
            i = spanless.find("<!--", i + 4)
            continue
        else:
            end = len(masked)
        parts.append(out[pos:i])
        parts.append(_blank(masked[i:end]))
        pos = end
        i = spanless.find("<!--", end)
    parts.append(out[pos:])
    return "".join(parts)


# A path into the skill's references/ or assets/ written as text or a code span (`references/api.md`),
# the way many skills point at their files: it must end with a file extension.
_MENTION = re.compile(r"(?<![\w./@:-])(?:\./)?((?:references|assets)/[A-Za-z0-9_][\w./-]*\.[A-Za-z0-9]{1,8})(?![\w/-])")
_LINK_DEST = re.compile(r"\]\([^)\n]*\)")
# A stand-in file name in a how-to ("references/filename.md", "lesson_X.md", "your-schema.json").
_STAND_IN = re.compile(r"/(?:file(?:name)?|name|example[\w-]*|foo|bar|x+|your[\w-]*|my[-_][\w-]*|[\w-]*[_-][xXnN])\.\w+$")


def path_mentions(text: str) -> list[Link]:
    """Paths into ``references/`` or ``assets/`` named outside links and fenced code (code spans
    included), e.g. "see `references/api.md`"."""
    if "references/" not in text and "assets/" not in text:
        return []
    if "\r" in text:  # a CR alone ends a line (old Mac files): "\n" in its place keeps every offset
        text = _LONE_CR.sub("\n", text)
    masked = _LINK_DEST.sub(lambda m: _blank(m.group(0)), _mask_code(text, spans=False))
    out: list[Link] = []
    starts: list[int] | None = None
    for m in _MENTION.finditer(masked):
        if _STAND_IN.search(m.group(1)):
            continue
        if starts is None:
            starts = [0]
            starts.extend(nl.end() for nl in re.finditer("\n", text))
        offset = m.start(1)
        line = bisect.bisect_right(starts, offset)
        out.append(Link(m.group(0), m.group(1), line, offset - starts[line - 1] + 1))
    return out


def _ref_defs(masked: str) -> Iterator[re.Match[str]]:
    """``_REF_DEF.finditer(masked)``, trying the pattern only at lines that open with ``[``.

    A multi-line ``^`` pattern cannot be searched for by a literal prefix, so the regex engine
    would try it at every character; a definition spanning lines hides the line starts it covers.
    """
    if not contains(masked, "]:"):
        return
    end = 0
    for cand in _REF_DEF_START.finditer("\n" + masked):
        pos = cand.start()  # the "\n" found is masked[pos - 1] (or the one put in front): a line starts at pos
        if pos < end:
            continue
        m = _REF_DEF.match(masked, pos)
        if m:
            yield m
            end = m.end()


def _escaped(text: str, pos: int) -> bool:
    """The character at ``pos`` follows an odd run of backslashes: a literal, not Markdown syntax."""
    n = 0
    while pos - n > 0 and text[pos - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _inline_links(masked: str, pos: int = 0, endpos: int | None = None) -> Iterator[re.Match[str]]:
    for m in _INLINE_LINK.finditer(masked, pos, len(masked) if endpos is None else endpos):
        close = masked.rindex("](", m.start(), m.start(1) + 1)
        # CommonMark: `\[text\](path)` is literal brackets, not a link (a skill writing out the syntax)
        if _escaped(masked, m.start()) or _escaped(masked, close):
            continue
        yield m
        if endpos is None and masked.find("](", m.start() + 1, close) >= 0:
            # an image in the link's text (`[![diagram](assets/d.png)](assets/d.png)`) is a link too
            yield from _inline_links(masked, m.start() + 1, close)


def _link_matches(masked: str) -> Iterator[re.Match[str]]:
    yield from _inline_links(masked)
    yield from _ref_defs(masked)


def local_links(text: str) -> list[Link]:
    """Relative links and images in Markdown, outside code; URLs, anchors and placeholders skipped."""
    if "]" not in text or (not contains(text, "](") and not contains(text, "]:")):
        return []
    if "\r" in text:  # a CR alone ends a line (old Mac files): "\n" in its place keeps every offset
        text = _LONE_CR.sub("\n", text)
    masked = _mask_code(text)
    found: list[tuple[int, str, str]] = []
    for m in _link_matches(masked):
        raw = m.group(1).strip()
        if raw.startswith("<") and raw.endswith(">"):
            raw = raw[1:-1].strip()
        if not raw or raw.startswith(("#", "//", "?")) or _SCHEME.match(raw) or _PLACEHOLDER.search(raw):
            continue
        path = unquote(raw.split("#", 1)[0].split("?", 1)[0])
        if path:
            found.append((m.start(1), raw, path))
    found.sort()
    # Lines counted from one link to the next (a few links in a long body: no table of every line)
    out: list[Link] = []
    line, pos = 1, 0
    for offset, raw, path in found:
        line += text.count("\n", pos, offset)
        pos = offset
        out.append(Link(raw, path, line, offset - text.rfind("\n", 0, offset)))
    return out


@functools.lru_cache(maxsize=4096)  # (skills link the same few paths: `references/REFERENCE.md`)
def _resolve(source_dir: str, path: str) -> str | None:
    """The link's posix path relative to the skill folder, or None when it leaves the folder."""
    path = path.replace("\\", "/")
    if path.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(source_dir, path)) if source_dir else posixpath.normpath(path)
    if joined == ".." or joined.startswith("../"):
        return None
    return "" if joined == "." else joined


_links_cache: list = [None, None]  # (document, links): B704-B706 parse each body once


_mentions_cache: list = [None, None]  # (document, mentions): B706 and B708 scan each body once


def _body_mentions(ctx: RuleContext) -> list[Link]:
    if _mentions_cache[0] is not ctx.document:
        _mentions_cache[0], _mentions_cache[1] = ctx.document, path_mentions(ctx.document.body)
    return _mentions_cache[1]


def _body_links(ctx: RuleContext) -> list[tuple[Link, Position, str | None]]:
    if _links_cache[0] is ctx.document:
        return _links_cache[1]
    body = ctx.document.body
    offset = ctx.document.body_line - 1
    out = [(link, Position(link.line + offset, link.column), _resolve("", link.path)) for link in local_links(body)]
    _links_cache[0], _links_cache[1] = ctx.document, out
    return out


@rule(
    "B701", "body-too-long", "The body is over the line limit (500 lines by default).",
    rationale="""
        The specification: "Keep your main SKILL.md under 500 lines. Move detailed reference
        material to separate files." The whole body is loaded into the context on activation, and
        Codex has been seen truncating reads near line 220-260. The limit is `[lint]
        max-body-lines`: a body of more lines than that is reported (as skill-validator reports
        ">500 lines"). A warning: it is guidance, not a hard rule (351 real skills exceed it).
    """,
    bad="a 900-line SKILL.md", good="a 200-line SKILL.md that links references/details.md",
    severity=Severity.WARNING, profiles=REC_SPEC, kinds=SKILL_AND_LIGHT, agnix=("AS-012",),
)
def body_too_long(ctx: RuleContext):
    body = ctx.document.body
    limit = ctx.settings.max_body_lines
    if len(body) < limit:  # cannot hold `limit` newlines
        return
    lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    if lines > limit:
        yield Finding(f"body is {lines:,} lines; keep it to {limit:,} or fewer and move details to references/",
                      Position(ctx.document.body_line, 1))


@rule(
    "B702", "body-too-many-tokens", "The body is over the token budget (~5,000 tokens by default).",
    rationale="""
        The specification recommends under 5,000 tokens for the instructions. skillc estimates
        tokens without a tokenizer: ASCII characters / 4 plus one token per non-ASCII character
        (BPE tokenizers average ~4 characters per token on English and code, and about one per
        character on CJK). The estimate is within ~15% of o200k on English prose, and costs
        microseconds. The limit is `[lint] max-body-tokens`: an estimate above it is reported.
    """,
    bad="a 30,000-character body", good="a 12,000-character body with references/ for the rest",
    severity=Severity.WARNING, profiles=REC_SPEC, kinds=SKILL_AND_LIGHT, agnix=("AS-021",),
)
def body_too_many_tokens(ctx: RuleContext):
    body = ctx.document.body
    limit = ctx.settings.max_body_tokens
    if len(body) <= limit:  # never more tokens than characters
        return
    tokens = estimate_tokens(body)
    if tokens > limit:
        yield Finding(f"body is about {tokens:,} tokens (estimated); keep it to {limit:,} or fewer",
                      Position(ctx.document.body_line, 1))


@rule(
    "B703", "empty-body", "The file has frontmatter but no instructions.",
    rationale="""
        The specification: SKILL.md "must contain YAML frontmatter followed by Markdown content".
        A skill with only a name and description gives the agent nothing to do once activated.
    """,
    bad="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
    """,
    good="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
        # PDF
        Run `scripts/extract.py <file>`.
    """,
    severity=Severity.WARNING, profiles=REC_SPEC, kinds=SKILL_AND_LIGHT,
)
def empty_body(ctx: RuleContext):
    if ctx.document.frontmatter is not None and not ctx.document.body.strip():
        yield Finding("the body is empty; add the instructions after the frontmatter",
                      Position(ctx.document.frontmatter.end_line, 1))


@rule(
    "B704", "broken-relative-link", "A relative link or image points at a file that does not exist.",
    rationale="""
        The agent follows relative links to load references on demand; a broken one (101 real
        skills, e.g. `reference/` for `references/`) loses the material silently. skillc checks
        inline links, images and reference definitions outside code blocks and code spans,
        URL-decodes the path and drops `#fragment` and `?query`; URLs, `mailto:`, anchors and
        placeholders (`{baseDir}`, `${CLAUDE_PLUGIN_ROOT}`, `$SKILL_DIR`, `{{…}}`) are not paths.
        Code is found as CommonMark finds it: fenced blocks (at any indentation, as in list items),
        code spans pairing backtick runs of the same length within a paragraph (a blank line, list
        item, heading, quote or table row ends one) and HTML comments. Links in indented code
        blocks and raw HTML are still checked: telling an indented block from a list item's
        continuation needs the list around it.
    """,
    bad="[guide](reference/guide.md)  (the folder is references/)", good="[guide](references/guide.md)",
    severity=Severity.WARNING, profiles=REC, kinds=SKILL, agnix=("REF-002",),
)
def broken_relative_link(ctx: RuleContext):
    files = None
    for link, pos, rel in _body_links(ctx):
        if rel is None:
            continue  # B705
        if files is None:
            files = skill_files(ctx)
        rel = rel.rstrip("/")
        if rel not in files.files and rel not in files.dirs and not files.truncated \
                and not _inside_nested_skill(files, rel):
            yield Finding(f"link target {link.target!r} does not exist in the skill", pos)


def _inside_nested_skill(files: SkillFiles, rel: str) -> bool:
    """``rel`` lies in a folder the listing holds but did not enter: a nested skill's (its files are
    its own, published under its own ID beside the parent's, so the link still resolves)."""
    d = rel.rpartition("/")[0]
    while d:
        if d in files.dirs:
            prefix = d + "/"
            return not any(p.startswith(prefix) for p in files.files) and \
                not any(p.startswith(prefix) for p in files.dirs)
        d = d.rpartition("/")[0]
    return False


@rule(
    "B708", "mentioned-file-missing", "SKILL.md names a file in `references/` or `assets/` that does not exist.",
    rationale="""
        Many skills point at their files in text or a code span rather than a link ("see
        `references/api.md`": 1,736 such mentions in the surveyed corpora, against 1,006 links),
        and the agent reads the file when it needs it; a missing one (renamed, never committed, or
        differing only by case: `Security.md`) loses the material as silently as a broken link.
        Only paths starting with `references/` or `assets/` and ending with a file extension are
        checked, outside links (B704's) and fenced code blocks (example trees); paths into other
        folders often name the user's project, not the skill, and stand-in names
        (`references/filename.md`, `lesson_X.md`) are skipped. Not in any profile (enable it with
        `extend-select = ["B708"]`): text also names files as examples of what a skill *could*
        hold (skill-creator's "`references/finance.md` for financial schemas"), about 40 of the 200
        findings on the surveyed corpora.
    """,
    bad="For the API, read `references/api.md`.  (the file is references/API.md)",
    good="For the API, read `references/api.md`.  (the file exists)",
    severity=Severity.WARNING, profiles=frozenset(), kinds=SKILL,
)
def mentioned_file_missing(ctx: RuleContext):
    mentions = _body_mentions(ctx)
    if not mentions:
        return
    files = skill_files(ctx)
    if files.truncated:
        return
    folded = {f.lower(): f for f in files.files}
    offset = ctx.document.body_line - 1
    seen: set[str] = set()
    for m in mentions:
        if m.path in files.files or m.path in seen or _inside_nested_skill(files, m.path):
            continue
        seen.add(m.path)
        other = folded.get(m.path.lower())
        hint = f" (the file is {other}: names differ by case on Linux)" if other else ""
        yield Finding(f"SKILL.md names {m.path}, which does not exist in the skill{hint}",
                      Position(m.line + offset, m.column))


@rule(
    "B705", "link-escapes-skill", "A relative link leaves the skill folder (`../…` or an absolute path).",
    rationale="""
        A skill is published, zipped and installed as one folder; a link to `../other-skill/` or
        `/docs/x.md` works in the repository and breaks everywhere else (57 real skills). Link to
        a copy inside the skill, or to a URL.
    """,
    bad="[threats](../threat-detection/SKILL.md)", good="[threats](references/threat-detection.md)",
    severity=Severity.WARNING, profiles=REC, kinds=SKILL,
    agnix=("REF-002",),
)
def link_escapes_skill(ctx: RuleContext):
    for link, pos, rel in _body_links(ctx):
        if rel is None:
            where = "is an absolute path" if link.path.startswith("/") else "leaves the skill folder"
            yield Finding(f"link target {link.target!r} {where}; the skill is published as one folder", pos)


@rule(
    "B706", "nested-reference", "A file that SKILL.md links to links on to further files.",
    rationale="""
        The specification: "Keep file references one level deep from SKILL.md. Avoid deeply nested
        reference chains." Agents read a referenced file when needed, but rarely follow a second
        hop. Links back to SKILL.md, anchors, links between a file and itself, and links to files
        SKILL.md links too, or that lie in a folder it links (they are one level deep already), are fine.
    """,
    bad="SKILL.md → references/a.md → references/b.md",
    good="SKILL.md → references/a.md and SKILL.md → references/b.md",
    severity=Severity.WARNING, profiles=REC_SPEC, kinds=SKILL, agnix=("AS-013",),
)
def nested_reference(ctx: RuleContext):
    files = None
    seen: set[str] = set()
    links = _body_links(ctx)
    direct = {rel for _, _, rel in links if rel}  # what SKILL.md links itself: one level deep already
    named = False  # (and what it names in text, `references/b.md` in a list: added when first needed)
    for _link, pos, rel in links:
        if not rel or not rel.lower().endswith(MARKDOWN_EXTENSIONS) or rel in seen:
            continue
        seen.add(rel)
        if files is None:
            files = skill_files(ctx)
        if rel not in files.files:
            continue
        text = skill_text(ctx, rel)
        if not text:
            continue
        source_dir = posixpath.dirname(rel)
        further = []
        for inner in local_links(text):
            target = _resolve(source_dir, inner.path)
            if target and target != rel and target not in ("SKILL.md",) and target.rstrip("/") in files.files \
                    and target not in direct and target.rstrip("/") not in direct \
                    and not _in_linked_folder(target, direct, files):
                if not named:
                    named = True
                    direct |= {m.path for m in _body_mentions(ctx)}
                    if target in direct or target.rstrip("/") in direct:
                        continue
                further.append(target)
        if further:
            shown = ", ".join(sorted(set(further))[:3]) + (" …" if len(set(further)) > 3 else "")
            yield Finding(f"{rel} links on to {shown}; keep references one level deep from SKILL.md "
                          "(link those from SKILL.md instead)", pos)


def _in_linked_folder(target: str, direct: set[str], files: SkillFiles) -> bool:
    """``target`` lies in a folder SKILL.md links itself (`[skeletons](references/skeletons/)`): the
    agent is pointed at the folder's files from SKILL.md, one level deep already."""
    d = target.rpartition("/")[0]
    while d:
        if d in direct and d in files.dirs:
            return True
        d = d.rpartition("/")[0]
    return False


@rule(
    SECRET_RULE, "secret-in-skill", "A file of the skill contains what looks like a credential.",
    rationale="""
        Skills are published and copied into agents' contexts; a key in SKILL.md or in a reference
        leaks to every user. skillc scans SKILL.md and the skill's text files (binary files and
        nested skills skipped, at most 200 files and 1 MiB each) for provider key formats (AWS,
        GCP, GitHub, Slack, OpenAI, Anthropic, Stripe), JWTs, private keys, `password=`/`token:`
        assignments, `Authorization` headers and URLs with passwords (but on `localhost`, or on a
        stand-in host named exactly `db`, `host` or `server`, as in examples). Placeholders
        (`<your-token>`, `${TOKEN}`, `xxx`, `changeme`) are not reported, and the value is never
        printed. File and folder names are scanned too (a folder is the skill's ID, and the bundle
        publishes names). Turn the scan off with `[lint] secret-scan = false`; the build still never
        publishes a secret: it withholds a supporting file that holds one (scanned whole, binary
        files too) and does not publish a skill whose SKILL.md or folder name holds one.
    """,
    bad="export GITHUB_TOKEN=ghp_… (a real token)", good="export GITHUB_TOKEN=${GITHUB_TOKEN}",
    profiles=REC, kinds=frozenset(ItemKind),
    agnix=("XP-SK-003", "CDX-AG-002"),
)
def secret_in_skill(ctx: RuleContext):
    if not ctx.settings.secret_scan:
        return
    for m in secrets.scan(ctx.document.text):
        yield Finding(f"possible {m.kind} (value not shown); remove it and rotate the credential",
                      Position(m.line, m.column))
    if ctx.item.kind is not ItemKind.SKILL:
        yield from _secrets_in_paths(ctx, [ctx.item.path])
        return
    files = skill_files(ctx)
    own = ctx.item.file_name
    # Names are published too (the folder is the skill's ID; files keep their names): one scan of all.
    yield from _secrets_in_paths(ctx, [ctx.item.path, *(_item_path(ctx, rel) for rel in sorted(files.files)
                                                         if rel != own)])
    scanned = 0
    for rel in sorted(files.files):
        if rel == own or rel in files.links:
            continue
        if scanned >= MAX_SCANNED_FILES:
            break
        scanned += 1
        text = skill_text(ctx, rel)
        if not text:
            continue
        for m in secrets.scan(text):
            yield Finding(f"possible {m.kind} (value not shown); remove it and rotate the credential",
                          Position(m.line, m.column), path=_item_path(ctx, rel))


def _secrets_in_paths(ctx: RuleContext, paths: list[str]):
    for m in secrets.scan("\n".join(paths)):
        yield Finding(f"the path holds a possible {m.kind}; rename it and rotate the credential (the build "
                      "never publishes it)", None, path=paths[m.line - 1])


def _item_path(ctx: RuleContext, rel: str) -> str:
    return f"{ctx.item.skill_dir}/{rel}" if ctx.item.skill_dir else rel
