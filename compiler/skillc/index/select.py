"""Skill selection: Plan Cascade detection, then adk-rust's lexical scorer (seed 000 §5.6.4).

Detection (``ExternalSkillLoader._skill_matches_project``; research/frameworks.md §3.2):

* ``cli`` mode (the Python CLI): for each ``detect.files`` entry that exists in the project root
  (relative path, no globbing), its text is searched for each pattern as a plain, case-sensitive
  substring, in the text as ``Path.read_text`` gives it (CRLF and a lone CR read as LF); an empty
  pattern list never matches.  Unreadable files are skipped.
* ``desktop`` mode (the Rust desktop variant): an existing file is enough when there are no
  patterns; with patterns, one of them must appear in one of the existing files (read as they
  are); a rule injected ``always``, or into no phase, counts for every phase.

Matches keep the rules' order, are stably sorted by priority (highest first), deduplicated by name,
cut to ``max_skills_per_story`` (3), and only then filtered by phase (``inject_into``) — so a phase can
get fewer skills than the cut allowed.  Lexical matches (skills without detection rules, scored by
adk-rust's scorer with ``min_score`` 1.0) fill the remaining slots, best score first, higher priority
breaking ties, then name and ID.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DEFAULT_MAX_SKILLS_PER_STORY = 3
DEFAULT_INJECT_INTO = ("implementation",)
PHASES = ("planning", "implementation", "retry")
DETECT_MODES = ("cli", "desktop")
MAX_DETECT_FILE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DetectRule:
    name: str  # the external-skills.json key
    id: str  # the skill ID in the bundle
    source: str
    source_type: str
    priority: int
    files: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    inject_into: tuple[str, ...] = DEFAULT_INJECT_INTO

    @classmethod
    def from_json(cls, data: Mapping) -> DetectRule:
        return cls(str(data["name"]), str(data["id"]), str(data.get("source", "")), str(data.get("source_type", "")),
                   int(data.get("priority", 0)), tuple(data.get("files", ())), tuple(data.get("patterns", ())),
                   tuple(data.get("inject_into", DEFAULT_INJECT_INTO)))

    def to_json(self) -> dict:
        return {"name": self.name, "id": self.id, "source": self.source, "source_type": self.source_type,
                "priority": self.priority, "files": list(self.files), "patterns": list(self.patterns),
                "inject_into": list(self.inject_into)}


@dataclass(frozen=True, slots=True)
class Selected:
    id: str
    name: str  # rule name for detected skills, the skill's name for lexical ones
    reason: str  # "detected" | "lexical"
    priority: int
    source: str
    source_type: str
    score: float | None = None  # adk-rust's f32 score (lexical matches)

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "reason": self.reason, "priority": self.priority,
                "source": self.source, "source_type": self.source_type, "score": self.score}


class ProjectFiles:
    """Read-only access to files directly named by detection rules, never outside the project root."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, rel: str) -> Path | None:
        p = PurePosixPath(rel)
        if not rel or p.is_absolute() or "\\" in rel or any(part == ".." for part in p.parts):
            return None
        return self.root / p

    def exists(self, rel: str) -> bool:
        """Whether the file exists; a name the system refuses (a NUL byte, too long) or cannot look
        up (a folder it may not search) is not there: ``Path.exists`` raises for those, and a rule
        from the bundle must not crash selection (Plan Cascade: an unreadable file is skipped)."""
        path = self._path(rel)
        if path is None:
            return False
        try:
            os.stat(path)
        except (OSError, ValueError):
            return False
        return True

    def read(self, rel: str) -> str | None:
        """The first MAX_DETECT_FILE_BYTES of a regular file inside the root (a link may point
        elsewhere in it, never out of it; a FIFO would block), as text; None otherwise."""
        path = self._path(rel)
        if path is None:
            return None
        try:
            real, root = os.path.realpath(path), os.path.realpath(self.root)
        except (OSError, ValueError):  # (a NUL byte in the name)
            return None
        if not real.startswith(root + os.sep):
            return None
        try:
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                with open(fd, "rb", closefd=False) as fh:
                    data = fh.read(MAX_DETECT_FILE_BYTES)
            finally:
                os.close(fd)
        except OSError:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if len(data) == MAX_DETECT_FILE_BYTES and exc.start >= len(data) - 3:
                return data[:exc.start].decode("utf-8", "ignore")  # the cut split a character
            return None


SETTINGS = ("max_skills_per_story", "max_content_lines", "inventory_threshold", "max_injection_bytes")
_RULE_TEXT = ("name", "id", "source", "source_type")
_RULE_LISTS = ("files", "patterns", "inject_into")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def select_data_problem(doc: Mapping) -> str | None:
    """What is wrong with ``select.json`` data (``index/emit.py`` writes it), or None: per-skill
    ``priority`` (integers), ``source`` and ``source_type`` (strings) of one length, integer
    settings, and rules of the shape ``DetectRule.from_json`` reads."""
    settings = doc.get("settings", {})
    if not isinstance(settings, Mapping):
        return "settings is not an object"
    for key in SETTINGS:
        if key in settings and not _is_int(settings[key]):
            return f"settings.{key} is not an integer ({settings[key]!r})"
    priority, source, source_type = doc.get("priority"), doc.get("source"), doc.get("source_type")
    if not isinstance(priority, list) or not all(_is_int(v) for v in priority):
        return "priority is not a list of integers"
    if not _strings(source) or not _strings(source_type):
        return "source and source_type are not lists of strings"
    if not len(priority) == len(source) == len(source_type):  # type: ignore[arg-type]
        return (f"priority, source and source_type have {len(priority)}, {len(source)} and "  # type: ignore[arg-type]
                f"{len(source_type)} entries (one per skill)")  # type: ignore[arg-type]
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        return "rules is not a list"
    for n, rule in enumerate(rules):
        if not isinstance(rule, Mapping) or not isinstance(rule.get("name"), str) or not isinstance(rule.get("id"), str):
            return f"rule {n} has no name and id"
        if any(key in rule and not isinstance(rule[key], str) for key in _RULE_TEXT):
            return f"rule {n} ({rule['name']!r}): a name, id or source that is not a string"
        if "priority" in rule and not _is_int(rule["priority"]):
            return f"rule {n} ({rule['name']!r}): priority is not an integer"
        if any(key in rule and not _strings(rule[key]) for key in _RULE_LISTS):
            return f"rule {n} ({rule['name']!r}): files, patterns or inject_into is not a list of strings"
    return None


def matches(rule: DetectRule, files: ProjectFiles, mode: str = "cli") -> bool:
    existing = [f for f in rule.files if files.exists(f)]
    if mode == "desktop" and existing and not rule.patterns:
        return True
    for name in existing:
        text = files.read(name)
        if text is None:
            continue
        if mode == "cli" and "\r" in text:
            # the Python CLI reads with Path.read_text (text mode): CRLF and a lone CR are LF
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if any(pattern in text for pattern in rule.patterns):
            return True
    return False


def detect(rules: Sequence[DetectRule], files: ProjectFiles, *, mode: str = "cli",
           max_skills: int = DEFAULT_MAX_SKILLS_PER_STORY) -> list[DetectRule]:
    """``detect_applicable_skills``: matches, stable-sorted by priority, deduplicated by name, cut."""
    found = [r for r in rules if matches(r, files, mode)]
    found.sort(key=lambda r: -r.priority)  # list.sort is stable: rule order among equal priorities
    seen: set[str] = set()
    out: list[DetectRule] = []
    for r in found:
        if r.name not in seen:
            seen.add(r.name)
            out.append(r)
    return out[:max_skills]


def for_phase(rules: Iterable[DetectRule], phase: str | None, mode: str = "cli") -> list[DetectRule]:
    """``get_skills_for_phase``, applied after the cut.  In ``desktop`` mode a rule injected
    ``always`` or into no listed phase applies to every phase (seed 000's ``InjectionPhase::Always``,
    "all phases"; the desktop select.rs); the Python CLI only asks ``phase in inject_into``."""
    return [r for r in rules if phase is None or phase in r.inject_into
            or (mode == "desktop" and (not r.inject_into or "always" in r.inject_into))]


@dataclass(frozen=True, slots=True)
class LexicalCandidate:
    id: str
    name: str
    priority: int
    source: str
    source_type: str
    score: float


def select(rules: Sequence[DetectRule], files: ProjectFiles | None, lexical: Sequence[LexicalCandidate], *,
           phase: str | None = None, mode: str = "cli",
           max_skills: int = DEFAULT_MAX_SKILLS_PER_STORY) -> list[Selected]:
    """Two-phase selection: detected skills first, then lexical matches in the remaining slots.

    ``lexical`` are the skills that passed adk-rust's ``min_score`` (any order); those with a
    detection rule or already detected are not used to fill slots.
    """
    detected = for_phase(detect(rules, files, mode=mode, max_skills=max_skills), phase, mode) if files else []
    out = [Selected(r.id, r.name, "detected", r.priority, r.source, r.source_type) for r in detected]
    taken = {r.id for r in detected}
    ruled = {r.id for r in rules}
    fill = sorted((c for c in lexical if c.id not in taken and c.id not in ruled),
                  key=lambda c: (-c.score, -c.priority, c.name, tuple(c.id.split("/"))))
    for c in fill[: max(max_skills - len(out), 0)]:
        out.append(Selected(c.id, c.name, "lexical", c.priority, c.source, c.source_type, c.score))
    return out
