"""Typed data passed between the pipeline stages.

Every stage (discover → parse → validate → resolve → index → emit) takes and returns the frozen
dataclasses defined here, so a stage can be tested alone and nothing downstream can mutate what an
earlier stage produced.
"""

from __future__ import annotations

import enum
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping

from .activecontent import runs_as_document

# Frontmatter keys that are fields of Meerkat's wire descriptor; every other top-level key goes into
# its flat string `metadata` map (skillc.emit.common.wire_metadata; lint F414).
WIRE_FRONTMATTER_KEYS = frozenset({"name", "description", "metadata", "requires_capabilities"})
# The skill IDs Meerkat's `/skill-ref` syntax can name (seed 004, agent/skills.rs).
SKILL_REF_ID = r"[a-z0-9-]+(?:/[a-z0-9-]+)*"
# The Agent Skills specification's `name`: lowercase letters and digits, single hyphens inside.
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


# --- identifiers every stage shares (a skill ID, the byte order of paths) ---------------------------

_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)
# Control characters, as R104 says, are C0, DEL and C1 too (U+0080-U+009F: NEL is a line break to
# YAML and XML 1.1, CSI starts a terminal escape sequence).
_BAD_CHARS = re.compile(r'[\x00-\x1f\x7f-\x9f%\\:*?"<>|#]')
MAX_NAME_BYTES = 255 - len(".json")  # the bundle stores skills/<quote(id)> and skills/<quote(id)>.json


_SURROGATE = re.compile("[\ud800-\udfff]")  # a byte of a name that is not UTF-8 (read with surrogateescape)


def shown_path(path: str) -> str:
    """``path`` printable: undecodable bytes as ``\\xff``, controls escaped."""
    raw = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _BAD_CHARS.sub(lambda m: m.group() if m.group() not in _CONTROLS else repr(m.group())[1:-1], raw)


_CONTROLS = frozenset(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))


def file_name_problem(path: str) -> str | None:
    """Why a skill's file cannot be published under its path, or None.  Every path is written into
    JSON, the manifest, the discovery index, zips and URLs: a name that is not UTF-8 text has no
    JSON form at all, and a control character is not allowed in XML 1.0 and breaks terminals and logs."""
    if _SURROGATE.search(path):
        return "its name is not UTF-8 text"
    bad = next((c for c in path if c in _CONTROLS), None)
    return f"its name holds the control character U+{ord(bad):04X}" if bad else None


# An ID of lowercase ASCII letters, digits, '-' and '_' (nearly every one) can fail none of
# ``id_problem``'s checks but a reserved device name or a length, which ``_PLAIN_DOUBT`` finds (a plain
# ID holds no dot, so a device name is a whole segment): answered without the per-segment checks.
_PLAIN_ID = re.compile(r"[a-z0-9_-]+(?:/[a-z0-9_-]+)*")
_PLAIN_DOUBT = re.compile(r"(?:^|/)(?:con|prn|aux|nul|com[0-9]|lpt[0-9])(?:/|$)|[^/]{256}")


def id_problem(skill_id: str) -> str | None:
    """Why ``skill_id`` is unsafe as a URL segment or a file name, or None when it is safe."""
    if (_PLAIN_ID.fullmatch(skill_id) and not _PLAIN_DOUBT.search(skill_id)
            and len(skill_id) + 2 * skill_id.count("/") <= MAX_NAME_BYTES):  # (quote() encodes '/' only)
        return None
    return _id_problem(skill_id)


def _id_problem(skill_id: str) -> str | None:
    """``id_problem`` by every check."""
    if not skill_id:
        return "the ID is empty"
    if _SURROGATE.search(skill_id):
        return "a folder name is not UTF-8 text"
    if runs_as_document(skill_id):  # (api/skills/<id> would be served as a page: see activecontent)
        return "it ends with an extension a static host serves as a page (.html, .svg, .xml…)"
    if not unicodedata.is_normalized("NFC", skill_id):
        return "it is not NFC-normalised (macOS would store a different name)"
    for seg in skill_id.split("/"):
        if seg in ("", ".", ".."):
            return "it has an empty, '.' or '..' segment"
        m = _BAD_CHARS.search(seg)
        if m:
            return f"segment {seg!r} contains {m.group()!r} (control characters and %\\:*?\"<>|# are not allowed)"
        if seg != seg.strip() or seg.endswith("."):
            return f"segment {seg!r} starts or ends with a space, or ends with a dot"
        if _WINDOWS_RESERVED.match(seg):
            return f"segment {seg!r} is a reserved device name on Windows"
        if len(seg.encode("utf-8")) > 255:
            return f"segment {seg[:20]!r}… is longer than 255 bytes"
    # (percent-encoding at most triples the UTF-8 length: most IDs need no encoding to be measured)
    if len(skill_id.encode("utf-8")) * 3 > MAX_NAME_BYTES and len(urllib.parse.quote(skill_id, safe="")) > MAX_NAME_BYTES:
        return f"once percent-encoded it is longer than {MAX_NAME_BYTES} bytes (a file name limit)"
    return None


def path_key(rel: str) -> bytes:
    """Byte order of a relative path (surrogate escapes keep undecodable names sortable)."""
    return rel.encode("utf-8", "surrogateescape")


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class ItemKind(str, enum.Enum):
    """What a discovered file is."""

    SKILL = "skill"  # a directory holding SKILL.md (Agent Skills specification, seed 000 format A)
    LIGHTWEIGHT = "lightweight"  # .skills/*.md or .claude/skills/*.md (seed 000 format B)
    CONVENTION = "convention"  # CLAUDE.md, AGENTS.md, … (seed 000 format C)


# Each enum's members by value, for the readers of records (the build cache, lint's workers), which
# look up tens of thousands of them: calling an Enum with a value runs Python code (~0.7 µs), a dict
# lookup does not.
SEVERITY_OF: Mapping[str, Severity] = {s.value: s for s in Severity}
ITEM_KIND_OF: Mapping[str, ItemKind] = {k.value: k for k in ItemKind}


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``text[start:end]`` (character offsets into the decoded file) with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A safe, mechanical change that resolves a diagnostic."""

    description: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    path: str  # posix path relative to the linted root
    line: int  # 1-based; 0 when the finding is about the file or directory as a whole
    column: int  # 1-based; 0 when unknown
    message: str
    skill: str | None = None  # skill identifier (directory path relative to the root)
    fix: Fix | None = None

    def sort_key(self) -> tuple:
        return (self.path.encode("utf-8", "surrogateescape"), self.line, self.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "skill": self.skill,
        }


@dataclass(frozen=True, slots=True)
class RuleRef:
    """What a stage needs to raise a diagnostic: the rule's code and default severity.

    The registry's ``Rule`` extends it with the documentation (``validate/rules/registry.py``), and
    ``declare`` takes one, so a code and its severity are written once.  It lives here, at the
    bottom, because discover and parse raise diagnostics but sit below validate: they declare their
    ``RuleRef``s in their own ``rules.py`` and never import the registry.
    """

    code: str
    severity: Severity

    def diagnostic(self, path: str, line: int, column: int, message: str, skill: str | None = None,
                   fix: Fix | None = None, *, severity: Severity | None = None) -> Diagnostic:
        """A diagnostic of this rule; ``severity`` overrides the default where the context decides it
        (a profile, a file that may omit what a skill file must have)."""
        return Diagnostic(self.code, self.severity if severity is None else severity, path, line, column,
                          message, skill, fix)


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based, in the whole file
    column: int  # 1-based


@dataclass(frozen=True, slots=True)
class Scalar:
    """How a YAML scalar was written, so rules can talk about the source, not the parsed value."""

    tag: str  # resolved YAML tag suffix: str, int, float, bool, null, timestamp, …
    text: str  # the scalar's text as written (unquoted content)
    style: str | None  # None (plain), "'", '"', "|", ">"
    position: Position
    end: Position


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """A parsed YAML frontmatter mapping.

    ``data`` holds Python values as a safe loader would build them (str, int, float, bool, None,
    datetime.date, list, dict).  ``keys`` maps each key path (a tuple of str keys and int indexes)
    to where the key (or the list item) starts, ``scalars`` records how every scalar value was
    written.
    """

    data: Mapping[str, Any]
    keys: Mapping[tuple, Position]
    scalars: Mapping[tuple, Scalar]
    start_line: int  # line of the opening ---
    end_line: int  # line of the closing ---

    def position(self, *path: Any) -> Position:
        """Where ``path`` is written; falls back to the nearest parent, then the opening fence."""
        p = tuple(path)
        while p:
            if p in self.keys:
                return self.keys[p]
            p = p[:-1]
        return Position(self.start_line, 1)

    def value_position(self, *path: Any) -> Position:
        scalar = self.scalars.get(tuple(path))
        return scalar.position if scalar else self.position(*path)


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed Markdown file with optional frontmatter: what the parse stage produces."""

    path: str  # posix, relative to the repository root
    kind: ItemKind
    sha256: str  # of the raw bytes
    size: int
    text: str  # decoded text as read (BOM and CRLF preserved)
    frontmatter: Frontmatter | None  # None when absent or unparseable
    body: str  # byte-exact body (everything after the closing fence line)
    body_line: int  # the line number where the body starts
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def meta(self) -> Mapping[str, Any]:
        return self.frontmatter.data if self.frontmatter else {}


@dataclass(frozen=True, slots=True)
class DiscoveredItem:
    """One file found by discovery."""

    kind: ItemKind
    path: str  # posix path of the file, relative to the root
    skill_dir: str  # posix path of the directory the skill is (for SKILL kind); "" for the root
    file_name: str
    aliases: tuple[str, ...] = ()  # other paths (symlinks inside the root) that reach this item
    # A skill's folder as discovery listed it, so rules need not list it again: (files, folders,
    # symbolic links), posix paths relative to the skill folder, nested skills' contents and skipped
    # folders left out.  None when discovery did not list it whole (see discover.py).
    listing: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None


@dataclass(frozen=True, slots=True)
class Discovery:
    root: str  # absolute path of the root walked
    items: tuple[DiscoveredItem, ...]
    diagnostics: tuple[Diagnostic, ...]
    collection_docs: Mapping[str, str] = field(default_factory=dict)  # dir → COLLECTION.md text
    # Claude Code plugin manifests (`.claude-plugin/marketplace.json`, `…/plugin.json`), root-relative
    # posix paths in byte order: linted by the manifest stage (skillc.validate.manifests), never published.
    manifests: tuple[str, ...] = ()


def plural(n: int, word: str) -> str:
    """``1 line``, ``2 lines``, ``1,024 files``: a count in messages."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"
