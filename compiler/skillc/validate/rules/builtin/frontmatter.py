"""Extended frontmatter: seed 000 format A and widely used extension keys (codes F4xx).

These rules belong to the ``recommended`` profile only: the ``spec`` and ``claude`` profiles
reject every non-specification key outright (S316).
"""

from __future__ import annotations

import datetime
import difflib
import functools
import re
import warnings
from typing import Any, Iterator

import yaml

from ....model import WIRE_FRONTMATTER_KEYS, ItemKind, Position, Severity
from ....parse.document import YAML_LOADER, a_type_name
from ....textscan import LazyPattern
from ..registry import Finding, RuleContext, rule
from . import schema
from .fixes import quote_scalar_fix
from .spec import SPEC_KEYS

REC = frozenset({"recommended"})
SKILL_AND_LIGHT = frozenset({ItemKind.SKILL, ItemKind.LIGHTWEIGHT})

# Every top-level key some known format defines.  Keep this list explicit: F401 reports the rest.
FORMAT_A_KEYS = ("version", "tags", "user-invocable", "hooks")  # seed 000 format A
SKILL_MEMORY_KEYS = ("skill-memory",)  # seed 003
STEP_SKILL_KEYS = ("id", "inputs", "steps")  # seed 002: skills as data objects with id, inputs, ordered steps
# Claude Code's documented SKILL.md keys (also checked by agnix CC-SK rules); argument-hint and
# disable-model-invocation appear in 6 and 5 of the surveyed repositories (research/corpora.md §4).
CLAUDE_CODE_KEYS = ("argument-hint", "disable-model-invocation", "model", "context", "agent", "effort", "shell",
                    "paths")
# Used across at least five surveyed repositories (corpora.md §4): author (2,578 files), category.
WIDELY_USED_KEYS = ("author", "category")
# Meerkat's SkillFrontmatter (seed 004): the capabilities a skill needs; published in the wire
# descriptor, and the runtime hides the skill where they are missing.
MEERKAT_KEYS = ("requires_capabilities",)
# OpenClaw's SKILL.md keys: `homepage` (its Skills UI's "Website" link; 377 surveyed files) and the
# slash-command dispatch to a tool (`command-dispatch: tool`, `command-tool`, `command-arg-mode`).
OPENCLAW_KEYS = ("homepage", "command-dispatch", "command-tool", "command-arg-mode")
KNOWN_KEYS = frozenset(SPEC_KEYS + FORMAT_A_KEYS + SKILL_MEMORY_KEYS + STEP_SKILL_KEYS + CLAUDE_CODE_KEYS
                       + WIDELY_USED_KEYS + MEERKAT_KEYS + OPENCLAW_KEYS)

BOOLEAN_KEYS = ("user-invocable", "disable-model-invocation")
TEXT_KEYS = ("argument-hint", "model", "context", "agent", "effort", "shell", "author", "category", "id")
HOOK_EVENTS = ("PreToolUse", "PostToolUse", "Stop")
_TOOL_ENTRY = LazyPattern(r"^[A-Za-z*@][\w.*:/@-]*(\(.*\))?$", re.S)
_LIST_ENTRY = re.compile(r"^[^\s()][^\n()]*(\(.*\))?$", re.S)  # list items may hold spaces: `Azure MCP/docs`


def _scalar(ctx: RuleContext, *path: Any):
    fm = ctx.document.frontmatter
    return fm.scalars.get(tuple(path)) if fm else None


@rule(
    "F401", "unknown-frontmatter-key", "A top-level key that no known skill format defines.",
    rationale=f"""
        skillc knows the specification's keys, seed 000 format A ({', '.join(FORMAT_A_KEYS)}),
        skill-memory (seed 003), step skills ({', '.join(STEP_SKILL_KEYS)}; seed 002), Meerkat's
        {', '.join(MEERKAT_KEYS)} (seed 004: moved under `metadata` it would gate nothing), OpenClaw's
        ({', '.join(OPENCLAW_KEYS)}), Claude Code's
        documented keys ({', '.join(CLAUDE_CODE_KEYS)}) and keys used across at least five surveyed
        repositories ({', '.join(WIDELY_USED_KEYS)}). Anything else is read by no client: it is
        usually a typo (`desciption`) or belongs under `metadata`. Recommended profile only; the
        `spec` and `claude` profiles use S316, which rejects every non-specification key.
    """,
    bad="""
        name: pdf
        website: https://example.com
    """,
    good="""
        name: pdf
        metadata:
          website: https://example.com
    """,
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.SKILL}),
    agnix=("CC-SK-017",),
)
def unknown_frontmatter_key(ctx: RuleContext):
    if KNOWN_KEYS.issuperset(ctx.meta):  # the usual case, in one call
        return
    lower = {k.lower() for k in ctx.meta if isinstance(k, str)}
    for key in ctx.meta:
        if key in KNOWN_KEYS:
            continue
        if key.lower() in KNOWN_KEYS and key.lower() in lower:
            continue  # `Name` beside `name`: F412 reports it
        close = _close_known_key(key.lower())
        if close and close[0] in TEXT_KEYS and not isinstance(ctx.meta[key], str):
            close = []  # (`models: [a, b]` is not a misspelt `model`, which holds one name as text)
        hint = f"; did you mean {close[0]!r}?" if close else "; move it under 'metadata' if clients should keep it"
        yield Finding(f"unknown frontmatter key {key!r}{hint}", ctx.key(key))


@functools.lru_cache(maxsize=1024)
def _close_known_key(key: str) -> tuple[str, ...]:
    """The known key ``key`` is most likely a misspelling of (difflib costs ~0.1 ms a key, and a
    repository repeats its unknown keys in skill after skill)."""
    return tuple(difflib.get_close_matches(key, _SORTED_KNOWN_KEYS, n=1, cutoff=0.8))


_SORTED_KNOWN_KEYS = sorted(KNOWN_KEYS)


@rule(
    "F402", "version-not-string", "`version` is not written as text.",
    rationale="""
        Format A defines `version` as a semantic-version string. Unquoted, YAML reads `2.0` as the
        number 2.0 and `2.10` as 2.1: the text is lost before any tool sees it (6 real skills).
        `--fix` quotes it.
    """,
    bad="version: 2.0", good="version: '2.0'", profiles=REC, fix="quote the value as written",
    kinds=frozenset({ItemKind.SKILL}), keys=("version",),
)
def version_not_string(ctx: RuleContext):
    if "version" not in ctx.meta or isinstance(ctx.meta["version"], str):
        return
    value = ctx.meta["version"]
    scalar = _scalar(ctx, "version")
    # (not `version:` or `~`: quoting nothing wrote `version:''`, which breaks the YAML, and `'~'` is
    # a version no one wrote)
    if scalar is not None and value is not None and not isinstance(value, (list, dict)):
        yield Finding(f"'version' is read as {a_type_name(value)}; quote it: '{scalar.text}'",
                      scalar.position, quote_scalar_fix(ctx, scalar))
    else:
        yield Finding(f"'version' must be a version string such as '1.0.0', found {a_type_name(value)}",
                      ctx.value("version"))


_NEVER_DATES = frozenset({str, int, bool, float, type(None)})


def _dates(value: Any, path: tuple) -> Iterator[tuple]:
    if isinstance(value, (datetime.date, datetime.datetime)):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _dates(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _dates(v, path + (i,))


@rule(
    "F403", "implicit-date", "A value YAML reads as a date or timestamp where text is expected.",
    rationale="""
        YAML 1.1 turns `created: 2026-01-25` into a date object: JSON has no date type, other
        loaders keep the text, and round-tripping changes it. Frontmatter values are text; `--fix`
        quotes them. (`metadata` values are reported by S313, `version` by F402.)
    """,
    bad="created: 2026-01-25", good="created: '2026-01-25'", severity=Severity.WARNING, profiles=REC,
    fix="quote the date as written", kinds=SKILL_AND_LIGHT,
)
def implicit_date(ctx: RuleContext):
    for key, value in ctx.meta.items():
        if key in ("metadata", "version") or type(value) in _NEVER_DATES:  # (most values: no walk)
            continue
        for path in _dates(value, (key,)):
            scalar = _scalar(ctx, *path)
            text = scalar.text if scalar else str(value)
            fix = quote_scalar_fix(ctx, scalar) if scalar else None
            yield Finding(f"{'.'.join(map(str, path))!s} is read as a date; quote it: '{text}'",
                          scalar.position if scalar else ctx.key(*path), fix)


@rule(
    "F404", "tags-invalid", "`tags` is not a list of strings.",
    rationale="""
        Formats A and B define `tags` as a list of strings (block or flow style: `tags: [pdf, ocr]`).
        A comma string is one tag to every loader that follows the format.
    """,
    bad="tags: pdf, ocr", good="tags: [pdf, ocr]", profiles=REC, kinds=SKILL_AND_LIGHT, keys=("tags",),
)
def tags_invalid(ctx: RuleContext):
    if "tags" not in ctx.meta:
        return
    tags = ctx.meta["tags"]
    if isinstance(tags, str):
        parts = [t for t in re.split(r"[,\s]+", tags) if t]
        hint = f"; write a list: [{', '.join(parts)}]"
        yield Finding(f"'tags' must be a list of strings, found text{hint}", ctx.value("tags"))
    elif not isinstance(tags, list):
        yield Finding(f"'tags' must be a list of strings, found {a_type_name(tags)}", ctx.value("tags"))
    else:
        for i, tag in enumerate(tags):
            if not isinstance(tag, str) or not tag.strip():
                what = "empty" if isinstance(tag, str) or tag is None else f"{a_type_name(tag)}"
                yield Finding(f"tag {i + 1} must be non-empty text, found {what}", ctx.key("tags", i))


@rule(
    "F405", "boolean-key-not-boolean", "`user-invocable` or `disable-model-invocation` is not true/false.",
    rationale="""
        Both are booleans (format A; Claude Code). A quoted `"true"` is a string, which strict
        loaders reject and lenient ones read as true even when it says `"false"`.
    """,
    bad="user-invocable: \"yes\"", good="user-invocable: true", profiles=REC,
    kinds=frozenset({ItemKind.SKILL}), keys=BOOLEAN_KEYS, agnix=("CC-SK-014", "CC-SK-015"),
)
def boolean_key_not_boolean(ctx: RuleContext):
    for key in BOOLEAN_KEYS:
        if key in ctx.meta and not isinstance(ctx.meta[key], bool):
            value = ctx.meta[key]
            hint = " (remove the quotes)" if isinstance(value, str) and value.lower() in ("true", "false") else ""
            # (null by its YAML name: `value!r` wrote Python's `None`)
            shown = a_type_name(value) if value is None else repr(value)
            yield Finding(f"{key!r} must be true or false, found {shown}{hint}", ctx.value(key))


def split_tools(value: str) -> tuple[list[str], str, bool]:
    """Split an allowed-tools string into entries, respecting parentheses.

    Returns ``(entries, separator, balanced)`` where separator is ``","`` when a comma outside
    parentheses separates entries, else ``" "``.
    """
    if "(" not in value and ")" not in value:  # no argument patterns: str.split does it
        if "," in value:
            return [e.strip() for e in value.split(",")], ",", True
        return value.split(), " ", True
    if _FLAT_PARENS.fullmatch(value):
        # `Read Bash(git: *)`: each pattern blanked out, the separators left are the entries' (the
        # character loop below costs microseconds a value, and two rules split every value)
        masked = _PAREN_GROUP.sub(lambda m: "\0" * len(m.group()), value)
        if "," in masked:
            entries, start = [], 0
            for part in masked.split(","):
                entries.append(value[start : start + len(part)].strip())
                start += len(part) + 1
            return entries, ",", True
        return [value[m.start() : m.end()] for m in _NON_SPACE.finditer(masked)], " ", True
    return _split_tools_nested(value)


_FLAT_PARENS = re.compile(r"[^()]*(?:\([^()]*\)[^()]*)*")  # parentheses in pairs, none nested
_PAREN_GROUP = re.compile(r"\([^()]*\)")
_NON_SPACE = re.compile(r"\S+")  # (\s is str.isspace's set)


def _split_tools_nested(value: str) -> tuple[list[str], str, bool]:
    """``split_tools`` of any value, one character at a time (nested or unbalanced parentheses)."""
    depth, comma, lowest = 0, False, 0
    for c in value:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            lowest = min(lowest, depth)
        elif c == "," and depth == 0:
            comma = True
    # (a `)` before its `(` unbalances too, though the count comes back to zero: `Bash(x)) Read(`)
    balanced = depth == 0 and lowest == 0
    entries, cur, depth = [], [], 0
    for c in value:
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        if depth == 0 and ((comma and c == ",") or (not comma and c.isspace())):
            entries.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    entries.append("".join(cur).strip())
    if not comma:
        entries = [e for e in entries if e]
    return entries, "," if comma else " ", balanced


@rule(
    "F406", "allowed-tools-invalid", "`allowed-tools` has an empty or malformed entry.",
    rationale="""
        Each entry is a tool name, optionally with a parenthesised argument pattern: `Read`,
        `Bash(git:*)`, `mcp__github__create_issue`. Unbalanced parentheses or empty entries
        (`Read,,Write`) silently pre-approve the wrong thing. A list or a string is accepted (S314
        reports the list form in the `spec` profile).
    """,
    bad="allowed-tools: Read, Bash(git:*", good="allowed-tools: Read Bash(git:*)", profiles=REC,
    kinds=frozenset({ItemKind.SKILL}), keys=("allowed-tools",),
)
def allowed_tools_invalid(ctx: RuleContext):
    if "allowed-tools" not in ctx.meta:
        return
    value = ctx.meta["allowed-tools"]
    if isinstance(value, list):
        for i, entry in enumerate(value):
            if not isinstance(entry, str):
                yield Finding(f"allowed-tools entry {i + 1} must be text, found {a_type_name(entry)}",
                              ctx.key("allowed-tools", i))
            elif not _LIST_ENTRY.match(entry.strip()) or entry.count("(") != entry.count(")"):
                yield Finding(f"allowed-tools entry {entry!r} is not a tool name", ctx.key("allowed-tools", i))
        return
    if not isinstance(value, str):
        if "allowed-tools" in ctx.meta and value is not None:
            yield Finding(f"'allowed-tools' must be text or a list, found {a_type_name(value)}",
                          ctx.value("allowed-tools"))
        return
    entries, _, balanced = split_tools(value)
    if not balanced:
        yield Finding("'allowed-tools' has unbalanced parentheses", ctx.value("allowed-tools"))
        return
    for entry in entries:
        if not entry:
            yield Finding("'allowed-tools' has an empty entry (two commas in a row, or one at the start or end?)",
                          ctx.value("allowed-tools"))
        elif not _TOOL_ENTRY.match(entry):
            yield Finding(f"allowed-tools entry {entry!r} is not a tool name", ctx.value("allowed-tools"))


@rule(
    "F407", "allowed-tools-comma-separated", "`allowed-tools` is a comma-separated string.",
    rationale="""
        The specification defines a space-separated string; 2,782 real skills use commas
        (`Read, Write, Bash`). Claude Code accepts both, but a space-splitting client reads
        `Read,` as a tool name. Write it space-separated or as a YAML list.
    """,
    bad="allowed-tools: Read, Write, Bash(git:*)", good="allowed-tools: Read Write Bash(git:*)",
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=("allowed-tools",),
)
def allowed_tools_comma(ctx: RuleContext):
    value = ctx.meta.get("allowed-tools")
    if isinstance(value, str):
        entries, sep, balanced = split_tools(value)
        if sep == "," and balanced and all(entries):
            if any(" " in e for e in entries):  # (joined with spaces they could not be told apart)
                # A block list, not a flow `[…]` one: skills-ref's strict YAML refuses flow collections.
                fix = ("an entry holds a space, so write them as a YAML list, one `- entry` per line below "
                       "`allowed-tools:`: " + ", ".join(f"- {_yaml_text(e)}" for e in entries))
            else:
                fix = f"write: {' '.join(entries)}"
            yield Finding(f"'allowed-tools' is comma-separated; the specification separates tools with spaces "
                          f"({fix})", ctx.value("allowed-tools"))


def _yaml_text(text: str) -> str:
    """``text`` as a YAML list item reads it back: plain where it can be, else single-quoted
    (`Bash(echo: hi)` written plain would be a mapping)."""
    try:
        if yaml.load(f"- {text}", Loader=YAML_LOADER) == [text]:
            return text
    except yaml.YAMLError:
        pass
    return "'" + text.replace("'", "''") + "'"


def _hook_issues(ctx: RuleContext) -> list[schema.SchemaIssue]:
    return schema.issues(ctx.meta["hooks"], "hooks", ("hooks",))


def _is_type_issue(issue: schema.SchemaIssue) -> bool:
    return issue.path[-1:] == ("type",) and issue.validator == "const"


@rule(
    "F408", "hooks-invalid", "`hooks` does not have the format A structure.",
    rationale="""
        Format A hooks map an event to a list of `{matcher, hooks: [{type: command, command}]}`
        (for `Stop`, the matcher may be left out, or the list may hold the actions directly, as seed
        000's `stop: Vec<HookAction>` does). A wrong shape makes the loader drop every hook of the
        skill. skillc checks hooks with the published JSON Schema and never runs them.
    """,
    bad="""
        hooks:
          PreToolUse:
            matcher: Write
            command: ./check.sh
    """,
    good="""
        hooks:
          PreToolUse:
            - matcher: "Write|Edit"
              hooks:
                - type: command
                  command: ./check.sh
    """,
    profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=("hooks",),
    agnix=("CC-SK-010", "CC-HK-005", "CC-HK-006", "CC-HK-012"),
)
def hooks_invalid(ctx: RuleContext):
    if "hooks" not in ctx.meta:
        return
    for issue in _hook_issues(ctx):
        if not _is_type_issue(issue):
            yield Finding(issue.message, ctx.key(*issue.path))


@rule(
    "F409", "hook-event-unknown", "A hook event other than `PreToolUse`, `PostToolUse` or `Stop`.",
    rationale="""
        Format A defines three events. Claude Code knows more (`SessionStart`, `UserPromptSubmit`,
        …) but format A loaders ignore them, so the hook silently never runs there.
    """,
    bad="""
        hooks:
          BeforeTool: []
    """,
    good="""
        hooks:
          PreToolUse: []
    """,
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=("hooks",),
    agnix=("CC-HK-001",),
)
def hook_event_unknown(ctx: RuleContext):
    hooks = ctx.meta.get("hooks")
    if isinstance(hooks, dict):
        for event in hooks:
            if event not in HOOK_EVENTS:
                close = difflib.get_close_matches(event, HOOK_EVENTS, n=1, cutoff=0.7)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                yield Finding(f"hook event {event!r} is not one of {', '.join(HOOK_EVENTS)}{hint}",
                              ctx.key("hooks", event))


def _matchers(ctx: RuleContext) -> Iterator[tuple[tuple, str]]:
    hooks = ctx.meta.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        if isinstance(groups, list):
            for i, group in enumerate(groups):
                if isinstance(group, dict) and isinstance(group.get("matcher"), str):
                    yield ("hooks", event, i, "matcher"), group["matcher"]


# Format A matchers are compiled by Plan Cascade with Rust's `regex` crate (`Regex::new(matcher)`,
# desktop/src-tauri/src/services/orchestrator/hooks.rs); one that fails there is compared with the
# tool name as plain text, so the hook silently never fires for the tools it names.  Python's `re`
# differs from that dialect both ways: what Rust refuses is found by ``_rust_regex_error``, and
# Rust-only syntax is rewritten to its Python equivalent by ``_python_pattern`` before compiling.
_COUNTED = re.compile(r"\{\s*\d+\s*(?:,\s*(?:\d+\s*)?)?\}")
_RUST_FLAGS = frozenset("imsUuxR-")
_GROUP_ERRORS = (("(?=", "look-ahead"), ("(?!", "look-ahead"), ("(?<=", "look-behind"), ("(?<!", "look-behind"),
                 ("(?>", "an atomic group"), ("(?#", "a comment group"), ("(?(", "a conditional group"),
                 ("(?P=", "a backreference"))


def _escape_end(pattern: str, i: int) -> int:
    """The index after the escape starting at ``pattern[i] == "\\"`` (``\\p{L}``, ``\\x{41}`` whole)."""
    c = pattern[i + 1:i + 2]
    if c in ("p", "P", "x", "u", "U", "N") and pattern[i + 2:i + 3] == "{":
        close = pattern.find("}", i + 3)
        return close + 1 if close > 0 else len(pattern)
    if c in ("p", "P"):
        return i + 3
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``pattern[i] == "["`` (``len`` if unclosed)."""
    j = i + 1
    if pattern[j:j + 1] == "^":
        j += 1
    if pattern[j:j + 1] == "]":
        j += 1  # a leading `]` is literal in both dialects
    while j < len(pattern):
        if pattern[j] == "\\":
            j = _escape_end(pattern, j)
            continue
        if pattern.startswith("[:", j):  # a POSIX class `[:alpha:]`
            close = pattern.find(":]", j + 2)
            if close > 0:
                j = close + 2
                continue
        if pattern[j] == "]":
            return j + 1
        j += 1
    return len(pattern)


def _rust_regex_error(pattern: str) -> tuple[str, int] | None:
    """The first construct Python's ``re`` accepts but Rust's ``regex`` crate refuses: (message, index)."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1:i + 2]
            if e.isdigit():
                return "backreferences and octal escapes are not supported (Rust regex)", i
            if e == "Z":
                return "\\Z is not supported (Rust regex: use \\z)", i
            if e == "N":
                return "\\N{…} named characters are not supported (Rust regex)", i
            i = _escape_end(pattern, i)
        elif c == "[":
            j = i + 1
            while j < (end := _class_end(pattern, i)):
                if pattern[j] == "\\":
                    if pattern[j + 1:j + 2].isdigit():
                        return "backreferences and octal escapes are not supported (Rust regex)", j
                    j = _escape_end(pattern, j)
                else:
                    j += 1
            i = end
        elif c == "(" and pattern.startswith("(?", i):
            for prefix, what in _GROUP_ERRORS:
                if pattern.startswith(prefix, i):
                    return f"{what} is not supported (Rust regex)", i
            if not pattern.startswith(("(?P<", "(?<"), i):
                flags = re.match(r"\(\?([^:)]*)", pattern[i:]).group(1)
                bad = next((f for f in flags if f not in _RUST_FLAGS), None)
                if bad is not None:
                    return f"flag {bad!r} is not supported (Rust regex flags: i, m, s, U, u, x, R)", i
            i += 2
        elif c == "{":
            if not _COUNTED.match(pattern, i):
                return "'{' must open a repetition {n}, {n,} or {n,m} (Rust regex); escape a literal one: \\{", i
            i = pattern.index("}", i) + 1
        else:
            i += 1
    return None


def _python_pattern(pattern: str) -> str:
    """``pattern`` with Rust-only syntax Python spells otherwise: ``\\z``, ``\\x{…}``, ``(?<name>``,
    flags ``U`` and ``R`` (dropped: they change matching, not validity) and Unicode classes ``\\p{…}``
    (as ``\\w``: same validity).  Returned unchanged when it holds none (the usual case)."""
    if "\\" not in pattern and "(?" not in pattern:
        return pattern
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            end = _escape_end(pattern, i)
            e = pattern[i + 1:i + 2]
            if e in ("p", "P"):
                out.append("\\w")
            elif e in ("x", "u", "U") and pattern[i + 2:i + 3] == "{":
                digits = pattern[i + 3:end - 1].strip()
                try:
                    out.append(f"\\U{int(digits, 16):08x}")
                except ValueError:
                    out.append(pattern[i:end])  # (Python reports the bad escape)
            elif e == "z":
                out.append("\\Z")
            else:
                out.append(pattern[i:end])
            i = end
        elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            out.append("(?P<")
            i += 3
        elif pattern.startswith("(?", i) and (m := re.match(r"\(\?([imsUuxR-]*)([:)])", pattern[i:])):
            flags = m.group(1).replace("U", "").replace("R", "")
            kept = flags if flags.strip("-") else ""
            out.append(f"(?{kept}{m.group(2)}" if kept or m.group(2) == ":" else "")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matcher_error(pattern: str) -> tuple[str, int | None] | None:
    """Why a hook matcher would not compile in format A's dialect (Rust's ``regex``), or None."""
    try:
        with warnings.catch_warnings():  # (`[[a]`, `[a&&b]`: Python's FutureWarnings, not the user's concern)
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(_python_pattern(pattern))
    except re.error as exc:
        # (a position in the rewritten pattern is one in the original up to the first rewrite)
        pos = exc.pos if exc.pos is not None and _python_pattern(pattern[:exc.pos]) == pattern[:exc.pos] else None
        return exc.msg, pos
    except (OverflowError, ValueError) as exc:  # (a code point beyond U+10FFFF)
        return str(exc), None
    return _rust_regex_error(pattern)


@rule(
    "F410", "hook-matcher-invalid-regex", "A hook `matcher` is not a valid regular expression.",
    rationale="""
        Matchers are regular expressions over tool names (`Write|Edit`), in the dialect of Rust's
        `regex` crate: Plan Cascade, where format A comes from, compiles them with `Regex::new`
        and compares a matcher that does not compile with the tool name as plain text, so the
        hook silently never fires. skillc reports what that dialect refuses although Python
        accepts it (look-around, backreferences and octal escapes, atomic, comment and
        conditional groups, `\\Z`, `\\N{…}`, flags other than `imsUuxR`, a `{` that is not a
        repetition) and accepts Rust syntax Python lacks (`\\p{L}`, `\\z`, `\\x{41}`,
        `(?<name>…)`, the `U` flag). Not modelled: nested repetitions such as `a**` (Rust accepts
        them, skillc reports them) and class set operations (`[a&&b]`). The error's column is
        reported where it is known.
    """,
    bad="matcher: \"(?!Bash).*\"", good="matcher: \"Write|Edit\"", profiles=REC,
    kinds=frozenset({ItemKind.SKILL}), keys=("hooks",),
)
def hook_matcher_invalid_regex(ctx: RuleContext):
    for path, pattern in _matchers(ctx):
        error = matcher_error(pattern)
        if error is None:
            continue
        msg, at = error
        scalar = _scalar(ctx, *path)
        pos = ctx.key(*path)
        if scalar is not None:
            quote = 1 if scalar.style in ("'", '"') else 0
            col = scalar.position.column + quote + (at or 0)
            pos = scalar.position
            if scalar.position.line == scalar.end.line:
                # The pattern's index is a column only where the file holds the pattern as it is read:
                # an escape before it (`"\\d(?!x)"`, `'it''s'`) shifts the text, so the value is pointed at.
                lines = ctx.document.text.split("\n", scalar.position.line)  # (fewer in a file of CRs)
                line = lines[scalar.position.line - 1] if len(lines) >= scalar.position.line else ""
                start = scalar.position.column - 1 + quote
                if not at or line[start:start + at] == pattern[:at]:
                    pos = Position(scalar.position.line, col)
        yield Finding(f"hook matcher {pattern!r} is not a valid regular expression: {msg}"
                      + (f" at position {at}" if at is not None else ""), pos)


@rule(
    "F411", "hook-type-not-command", "A hook action's `type` is not `command`.",
    rationale="Format A has one hook type, `command` (a shell command); any other type is dropped by the loader.",
    bad="- type: shell\n  command: ./check.sh", good="- type: command\n  command: ./check.sh", profiles=REC,
    kinds=frozenset({ItemKind.SKILL}), keys=("hooks",),
    agnix=("CC-HK-016",),
)
def hook_type_not_command(ctx: RuleContext):
    if "hooks" not in ctx.meta:
        return
    for issue in _hook_issues(ctx):
        if _is_type_issue(issue):
            yield Finding(issue.message, ctx.value(*issue.path))


@rule(
    "F412", "key-case-conflict", "Two keys differ only by letter case (`Name` beside `name`).",
    rationale="""
        YAML keys are case-sensitive, so both survive parsing; a case-insensitive loader keeps
        whichever comes last, and two clients read two different skills. Keep the lower-case key.
    """,
    bad="""
        Name: code-to-prd
        name: code-to-prd
    """,
    good="name: code-to-prd", severity=Severity.WARNING, profiles=REC, kinds=SKILL_AND_LIGHT,
)
def key_case_conflict(ctx: RuleContext):
    if len({k.lower() for k in ctx.meta}) == len(ctx.meta):  # no two keys alike: the usual case
        return
    seen: dict[str, str] = {}
    for key in ctx.meta:
        low = key.lower()
        if low in seen:
            yield Finding(f"key {key!r} differs from {seen[low]!r} only by case", ctx.key(key))
        else:
            seen[low] = key


@rule(
    "F413", "text-key-not-string", "An extension key that holds text has another type.",
    rationale=f"""
        {', '.join(TEXT_KEYS)} are text. `argument-hint: [file]` is read as a list and
        `model: 4` as a number; clients that expect text reject the skill or show `['file']`.
        `--fix` quotes a plain scalar.
    """,
    bad="argument-hint: [file] [format]", good="argument-hint: '[file] [format]'", severity=Severity.WARNING,
    profiles=REC, fix="quote the value as written", kinds=frozenset({ItemKind.SKILL}), keys=TEXT_KEYS,
)
def text_key_not_string(ctx: RuleContext):
    for key in TEXT_KEYS:
        if key not in ctx.meta or isinstance(ctx.meta[key], str):
            continue
        value = ctx.meta[key]
        if isinstance(value, (datetime.date, datetime.datetime)):
            continue  # F403
        scalar = _scalar(ctx, key)
        # (a null is no text to keep: quoting `model:` wrote `model:''`, which breaks the YAML, and
        # `~` would become the text '~', as S313 says)
        fix = quote_scalar_fix(ctx, scalar) if scalar is not None and value is not None else None
        hint = " (quote it)" if isinstance(value, (list, int, float, bool)) else ""
        yield Finding(f"{key!r} must be text, found {a_type_name(value)}{hint}", ctx.value(key), fix)


@rule(
    "F414", "metadata-key-shadowed", "A `metadata` key that a top-level key of the same name hides.",
    rationale="""
        The wire descriptor's `metadata` is one flat map of strings: the frontmatter's `metadata`
        entries and its other top-level keys (`license`, format A's `version`…) go into it
        together. Where both hold a key with different values, the top-level one is published (the
        field its format defines: format A's `version` is the skill's semantic version) and the
        `metadata` one is not. Seed 000's own format A example has `version` in both.
    """,
    bad="""
        version: "3.2.0"
        metadata:
          version: "1.0.0"
    """,
    good="""
        version: "3.2.0"
        metadata:
          author: ana
    """,
    severity=Severity.WARNING, profiles=REC, kinds=frozenset({ItemKind.SKILL}), keys=("metadata",),
)
def metadata_key_shadowed(ctx: RuleContext):
    inner = ctx.meta.get("metadata")
    if not isinstance(inner, dict):
        return
    for key, value in inner.items():
        name = str(key)
        top = ctx.meta.get(name)
        # (`.nan` both times is the same value written twice, though NaN equals nothing)
        same = top == value or (isinstance(top, float) and isinstance(value, float) and top != top and value != value)
        if name in ctx.meta and name not in WIRE_FRONTMATTER_KEYS and not same:
            yield Finding(f"{name!r} is both a top-level key and a metadata key with another value; the wire "
                          f"metadata publishes the top-level one", ctx.key("metadata", key))
