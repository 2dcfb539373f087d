"""What an agent reads in a skill's Markdown (codes B709-B712, L906): tags, home paths, argument
placeholders, tables of contents, and links of convention files.

These rules read SKILL.md's body and the skill's other Markdown files (references, guides), as agnix
does (XML-001..003, CC-SK-021, CC-SK-023, CC-SK-034 report on any of them); files come from the
skill's listing (``skill_files``) and are read once per skill (``skill_text``, shared with B706/B707).
"""

from __future__ import annotations

import heapq
import os
import posixpath
import re
from collections.abc import Iterator

from ....model import ItemKind, Position, Severity
from ....textscan import contains
from ..registry import Finding, RuleContext, rule
from .content import MARKDOWN_EXTENSIONS, _mask_fences, code_spans, fence_blocks, skill_files, skill_text

REC = frozenset({"recommended"})
SKILL = frozenset({ItemKind.SKILL})
ALL_KINDS = frozenset(ItemKind)
MAX_MARKDOWN_FILES = 100  # Markdown files read per skill beside SKILL.md
MAX_FINDINGS_PER_FILE = 5  # a file with the same problem everywhere gets five lines, not fifty


_texts_of: list = [None, []]  # (document, its markdown_texts): B709, B710 and B712 list them once per file


def markdown_texts(ctx: RuleContext, with_skill_file: bool = True) -> list[tuple[str | None, str, int]]:
    """``(path, text, first line)`` of SKILL.md's body (path None: the document itself) and of the
    skill's other Markdown files (root-relative paths); for other kinds, the document's text."""
    if _texts_of[0] is not ctx.document:
        _texts_of[0], _texts_of[1] = ctx.document, list(_markdown_texts(ctx))
    texts = _texts_of[1]
    return texts if with_skill_file or ctx.item.kind is not ItemKind.SKILL else texts[1:]


def _markdown_texts(ctx: RuleContext) -> Iterator[tuple[str | None, str, int]]:
    if ctx.item.kind is not ItemKind.SKILL:
        yield None, ctx.document.text, 1
        return
    yield None, ctx.document.body, ctx.document.body_line
    files = skill_files(ctx)
    own = ctx.item.file_name
    read = 0
    for rel in sorted(files.files):
        if rel == own or rel in files.links or not rel.lower().endswith(MARKDOWN_EXTENSIONS):
            continue
        if read >= MAX_MARKDOWN_FILES:
            return
        read += 1
        text = skill_text(ctx, rel)
        if text:
            yield (f"{ctx.item.skill_dir}/{rel}" if ctx.item.skill_dir else rel), text, 1


def _position(text: str, offset: int, first_line: int) -> Position:
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(first_line + text.count("\n", 0, offset), offset - line_start + 1)


# ---------------------------------------------------------------------------------------- tags

# An XML-like tag: `<name …>`, `</name>`; a self-closing one and `<https://…>` autolinks are not.
_TAG = re.compile(r"<(/?)([A-Za-z][\w.:-]*)((?:\s[^<>]*)?)>")
# HTML elements that never close (void) or whose end tag may be left out.
_UNCLOSED_HTML = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                            "source", "track", "wbr", "p", "li", "dt", "dd", "option", "tr", "td", "th",
                            "thead", "tbody"})


def unbalanced_tags(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, message)`` for each unclosed, mismatched or unmatched tag of ``text`` outside code.

    Only the tags are placed against the code (``_outside_code``): blanking the code of every file,
    as the link rules do, would cost ten times the tag scan, and most files have few tags."""
    matches = list(_TAG.finditer(text))
    if not matches:
        return
    stack: list[tuple[str, int]] = []
    for m in _outside_code(text, matches):
        closing, name, attrs = m.group(1), m.group(2), m.group(3)
        if attrs.rstrip().endswith("/") or name.lower() in _UNCLOSED_HTML:
            continue
        if not closing:
            stack.append((name, m.start()))
            continue
        if stack and stack[-1][0] == name:
            stack.pop()
        elif any(open_name == name for open_name, _ in stack):
            while stack[-1][0] != name:  # the tags opened since are unclosed: reported as such
                yield stack[-1][1], f"tag <{stack[-1][0]}> is closed by </{name}>, which closes an outer tag"
                stack.pop()
            stack.pop()
        else:
            yield m.start(), f"closing tag </{name}> has no opening tag"
    for name, start in stack:
        yield start, f"tag <{name}> is never closed"


def _outside_code(text: str, matches: list[re.Match[str]]) -> Iterator[re.Match[str]]:
    """The matches outside fenced blocks, code spans (backtick runs paired on the match's line) and
    HTML comments."""
    blocks = fence_blocks(text) if "```" in text or "~~~" in text else []
    comments = "<!--" in text
    for m in matches:
        pos = m.start()
        if any(a <= pos < b for a, b in blocks):
            continue
        line_start = text.rfind("\n", 0, pos) + 1
        if text.count("`", line_start, pos) % 2:
            continue
        if comments and text.rfind("<!--", 0, pos) > text.rfind("-->", 0, pos):
            continue
        yield m


@rule(
    "B709", "unbalanced-xml-tag", "An XML-like tag in the Markdown is never closed, or closes another.",
    rationale="""
        Prompts use XML-like tags to delimit sections (`<example>…</example>`, `<workflow>`); an
        unclosed or crossed tag makes the model read the rest of the file as inside it. Tags in
        code blocks, code spans and HTML comments are not read; void and optional-end HTML
        elements (`<br>`, `<img>`, `<p>`, `<li>`) need no end tag. A warning in `recommended`:
        Markdown allows raw HTML, but an unbalanced tag is never what the author meant.
    """,
    bad="<example>\nRun the tests.", good="<example>\nRun the tests.\n</example>",
    severity=Severity.WARNING, profiles=REC, kinds=ALL_KINDS, agnix=("XML-001", "XML-002", "XML-003"),
)
def unbalanced_xml_tag(ctx: RuleContext):
    for path, text, first in markdown_texts(ctx):
        if "<" not in text:
            continue
        for n, (offset, message) in enumerate(unbalanced_tags(text)):
            if n == MAX_FINDINGS_PER_FILE:
                break
            yield Finding(message, _position(text, offset, first), path=path)


# ------------------------------------------------------------------------------- home paths

# A user's home folder: /Users/<name>, /home/<name>, C:\Users\<name> (not inside a longer path).
# (no look-behind in the patterns, and each opens with a literal, which the regex engine's fast scan
# looks for; the Windows form, whose drive letter is a class, is searched for only where `\Users`
# occurs; the character before a match is checked in Python, on the few matches)
_HOME_PATH = re.compile(r"/(?:Users|home)/([A-Za-z0-9][\w.-]*)")
_WINDOWS_HOME_PATH = re.compile(r"[A-Za-z]:\\{1,2}Users\\{1,2}([A-Za-z0-9][\w.-]*)")
_PATH_CHAR = re.compile(r"[\w./\\-]")
# Stand-ins for "your user name", and macOS's shared folder: not a real person's path.
_STAND_INS = frozenset({"user", "username", "you", "me", "name", "shared", "public", "default", "all users",
                        "example", "someone", "yourname", "your-name", "your_name"})


@rule(
    "B710", "hard-coded-user-path", "A file of the skill names a user's home folder (`/Users/jane`, `C:\\Users\\John`).",
    rationale="""
        A path into one person's home folder works on the author's machine only, and publishes their
        user name. Write it relative to the skill (`scripts/build.sh`), or through a variable
        (`$HOME`, `~`). Stand-ins (`/home/user`, `/Users/you`, `C:\\Users\\<name>`) are not
        reported. SKILL.md, the skill's Markdown files and convention files are read; a warning in
        `recommended`.
    """,
    bad="Run /Users/alice/projects/app/build.sh", good="Run scripts/build.sh from the skill folder",
    severity=Severity.WARNING, profiles=REC, kinds=ALL_KINDS, agnix=("CC-SK-021", "XP-SK-002", "XP-003"),
)
def hard_coded_user_path(ctx: RuleContext):
    for path, text, first in markdown_texts(ctx):
        if not contains(text, "Users") and not contains(text, "/home/"):  # (`in` compares at each character)
            continue
        unix = "/Users/" in text or "/home/" in text
        windows = "\\Users" in text
        found = 0
        matches = _HOME_PATH.finditer(text) if unix else iter(())
        if windows:
            matches = heapq.merge(matches, _WINDOWS_HOME_PATH.finditer(text), key=lambda m: m.start())
        for m in matches:
            if m.group(1).lower() in _STAND_INS or (m.start() and _PATH_CHAR.match(text, m.start() - 1)):
                continue  # (a stand-in, or the middle of a longer path or URL)
            yield Finding(f"'{m.group(0)}' is a user's home folder: it works on one machine only and publishes "
                          "a user name; use a path relative to the skill, or $HOME", _position(text, m.start(), first),
                          path=path)
            found += 1
            if found == MAX_FINDINGS_PER_FILE:
                break


# ---------------------------------------------------------------------- argument placeholders

_POSITIONAL = re.compile(r"\$([0-9])(?!\w)")  # (the character before is checked on the matches: `\$1`, `$$1`, `a$1`)
_NOT_BEFORE = re.compile(r"[\\$\w]")


@rule(
    "B711", "argument-placeholder-in-code", "SKILL.md has `$0`…`$9` inside code, which Claude Code replaces.",
    rationale="""
        When a skill is invoked with arguments, Claude Code replaces `$0`…`$9` (shorthand for
        `$ARGUMENTS[n]`) everywhere in SKILL.md, code blocks included: `awk '{print $1}'` reaches
        the model as `awk '{print first-argument}'`. Write shell positionals another way
        (`"${1}"`, `\\$1`) or move the script into `scripts/`. SKILL.md only (the substitution
        happens there); a warning in `recommended`.
    """,
    bad="```bash\nps -eo pid,rss | awk '{print $1}'\n```", good="```bash\nps -eo pid,rss | awk '{print \\$1}'\n```",
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.SKILL, ItemKind.LIGHTWEIGHT}),
    agnix=("CC-SK-023",),
)
def argument_placeholder_in_code(ctx: RuleContext):
    body = ctx.document.body
    if "$" not in body or "`" not in body and "~~~" not in body:
        return
    hits = [m for m in _POSITIONAL.finditer(body) if not (m.start() and _NOT_BEFORE.match(body, m.start() - 1))]
    if not hits:
        return
    fenced = _mask_fences(body)  # (a `$` blanked there lies in a fenced block)
    spans = code_spans(body)
    found = 0
    for m in hits:
        if fenced[m.start()] != "$" or any(a <= m.start() < b for a, b in spans):
            yield Finding(f"${m.group(1)} inside code is replaced by the skill's argument {m.group(1)} when the skill is "
                          "invoked with arguments; write it as ${" + m.group(1) + "} or \\$" + m.group(1),
                          _position(body, m.start(), ctx.document.body_line))
            found += 1
            if found == MAX_FINDINGS_PER_FILE:
                return


# --------------------------------------------------------------------------- tables of contents

TOC_MIN_LINES = 300  # Anthropic's skill guidance: a contents list above ~300 lines (agnix uses the same)
TOC_WINDOW = 60  # lines from the top where a contents list is looked for
_TOC_HEADING = re.compile(r"^#{1,6}\s*(?:table of )?contents\b|^#{1,6}\s*toc\b|^\*\*(?:table of )?contents",
                          re.I | re.M)
_TOC_LINK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[^\]]+\]\(#", re.M)


@rule(
    "B712", "reference-without-toc", "A Markdown reference over 300 lines has no table of contents near the top.",
    rationale="""
        An agent often reads the first part of a long reference (`head -100`) to decide where to
        look; a contents list at the top tells it what the rest holds. Anthropic's skill guidance
        asks for one above about 300 lines. A `Contents` heading or a list of `#anchor` links in the
        first 60 lines counts. Info, in no profile (enable with `extend-select = ["B712"]`): long
        references in the wild mostly lack one, and their headings already help.
    """,
    bad="references/api.md: 400 lines, no contents list",
    good="references/api.md: '## Contents' and its section links at the top",
    severity=Severity.INFO, profiles=frozenset(), kinds=SKILL, agnix=("CC-SK-034",),
)
def reference_without_toc(ctx: RuleContext):
    for path, text, _ in markdown_texts(ctx, with_skill_file=False):
        lines = text.count("\n") + 1
        if lines <= TOC_MIN_LINES:
            continue
        head = text[: _nth_newline(text, TOC_WINDOW)]
        if _TOC_HEADING.search(head) or len(_TOC_LINK.findall(head)) >= 3:
            continue
        yield Finding(f"the reference has {lines:,} lines and no table of contents near the top; add a "
                      "'## Contents' list of its sections", None, path=path)


def _nth_newline(text: str, n: int) -> int:
    pos = -1
    for _ in range(n):
        pos = text.find("\n", pos + 1)
        if pos < 0:
            return len(text)
    return pos


# ------------------------------------------------------------------------- convention file links

# A file path in a convention file: a link target, or a code span holding a relative path with an
# extension (`docs/setup.md`, `scripts/build.sh`).
_SPAN_PATH = re.compile(r"`(\.{0,2}/?[\w.-]+(?:/[\w.-]+)+\.[A-Za-z0-9]{1,8})`")
_LINK_PATH = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s#?]+)")
_TEMPLATED = re.compile(r"[{}<>$*]|YYYY|\bX+\b")


@rule(
    "L906", "convention-file-missing-path", "A convention file (AGENTS.md, CLAUDE.md) names a file that does not exist.",
    rationale="""
        Agents read AGENTS.md and CLAUDE.md first, and follow the files they name ("see
        `docs/setup.md`"); a path that does not exist sends them looking. Links and code spans
        holding a relative path with an extension are checked, from the file's folder and from the
        repository root; templated names (`memory/YYYY-MM-DD.md`, `{name}.md`) are not. A warning in
        `recommended`.
    """,
    bad="See `docs/nonexistent.md` for the setup.", good="See `docs/setup.md` for the setup.",
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.CONVENTION}), agnix=("CDX-AG-005", "REF-002"),
)
def convention_missing_path(ctx: RuleContext):
    text = ctx.document.text
    if "`" not in text and "](" not in text:
        return
    masked = _mask_fences(text)
    root = str(ctx.root)
    folder = posixpath.dirname(ctx.item.path)
    seen: set[str] = set()
    for pattern in (_SPAN_PATH, _LINK_PATH):
        for m in pattern.finditer(masked):
            target = m.group(1)
            if target in seen or _TEMPLATED.search(target) or target.startswith("/"):
                continue
            seen.add(target)
            near = posixpath.normpath(posixpath.join(folder, target))
            if near.startswith("../") or os.path.lexists(os.path.join(root, near)) \
                    or os.path.lexists(os.path.join(root, posixpath.normpath(target))):
                continue
            yield Finding(f"{ctx.item.file_name} names {target}, which does not exist in the repository",
                          _position(text, m.start(1), 1))
