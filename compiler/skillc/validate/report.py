"""Lint reports: text, JSON, GitHub workflow annotations and SARIF 2.1.0.

Renderers are pure: they take results and the diagnostics to show (already sorted, paths already
relative to what the reader expects) and return text.  File names that are not valid UTF-8 reach
here as surrogate escapes; every renderer shows them as ``\\xNN`` so output can always be encoded.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import click

from ..model import Diagnostic, ItemKind, Severity, plural
from ..version import __version__
from .lint import LintResult
from .rules.registry import RULES

FORMATS = ("text", "json", "github", "sarif")
_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/skillc/skillc"


def printable(value: str) -> str:
    """``value`` with undecodable bytes (surrogate escapes) shown as ``\\xNN``, also where a message
    quoted a name with ``repr`` (which writes them ``\\udcNN``)."""
    if "\\udc" in value:
        value = _REPR_SURROGATE.sub(r"\1\\x\2", value)
    if value.isascii():  # (a flag: no surrogate can be in it)
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        # A lone surrogate that is no escaped byte (from a JSON `\ud800`) shown as `\ud800`:
        # surrogateescape takes only U+DC80-U+DCFF, and raised on it (an internal error)
        value = _OTHER_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


_OTHER_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


# repr() of a surrogate-escaped byte 0x80-0xFF (an odd number of backslashes: not an escaped backslash)
_REPR_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


def one_line(value: str) -> str:
    """``printable``, with control characters (a line break in a file name, a terminal escape
    sequence in a remote skill's ID) shown as ``\\xNN``: a text report keeps one diagnostic per line,
    and nothing it prints drives the terminal."""
    value = printable(value)
    return _CONTROL.sub(_escaped, value) if _CONTROL.search(value) else value


def terminal_safe(value: str) -> str:
    """``one_line`` that keeps line breaks and tabs (messages of several lines)."""
    value = printable(value)
    return _TERMINAL.sub(_escaped, value) if _TERMINAL.search(value) else value


def shown(value: str, lines: bool = False) -> str:
    """What a command prints of a path, a name or a message: likely secrets redacted (a token can be
    a folder name, an archive member's name, a skill ID) and control characters escaped
    (``one_line``; ``lines``: ``terminal_safe``, line breaks kept)."""
    from ..secrets import redact

    value = redact(value)[0]
    return terminal_safe(value) if lines else one_line(value)


def shown_payload(value: object) -> object:
    """``shown`` applied to every string of a JSON payload (keys too); JSON escapes controls itself."""
    from ..secrets import redact

    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, dict):
        return {shown_payload(k): shown_payload(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown_payload(v) for v in value]
    return value


def echo_block(text: str) -> None:
    """Print a rendered block (an injection, an inventory), one final newline added unless it ends
    with one: byte for byte into a file or a pipe, ANSI escape sequences of a skill's text included
    (click strips them where stdout is no terminal); on a terminal, its control characters shown as
    ``\\xNN``: a skill's text never drives the terminal."""
    tty = sys.stdout.isatty()
    click.echo(terminal_safe(text) if tty else text, nl=not text.endswith("\n"), color=not tty)


def shell_word(path: str) -> str:
    """``path`` as one shell word a skillc command reads as a path argument, so a command printed as
    advice runs as shown: quoted when it holds spaces or quotes, ``./`` before a leading dash (which
    would read as an option)."""
    import shlex

    return shlex.quote("./" + path if path.startswith("-") else path)


def _escaped(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TERMINAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def summary(results: Sequence[LintResult]) -> dict[str, int]:
    """``skills``: the SKILL.md files checked; ``files``: everything checked (convention and
    lightweight files too, as the text report's "Checked N files" counts)."""
    return {
        "skills": sum(1 for r in results for i in r.items if i.item.kind is ItemKind.SKILL),
        "files": sum(len(r.items) for r in results),
        "errors": sum(r.count(Severity.ERROR) for r in results),
        "warnings": sum(r.count(Severity.WARNING) for r in results),
    }


_summary = summary


def render_text(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic], color: bool, fixed: int = 0) -> str:
    """``path:line:col: CODE message`` lines and a summary line (ANSI colour when ``color``)."""
    import click

    lines = []
    for d in diagnostics:
        code = click.style(d.code, fg=_COLORS[d.severity], bold=True) if color else d.code
        loc = f"{one_line(d.path) or '.'}:{d.line}:{d.column}:"
        lines.append(f"{click.style(loc, bold=True) if color else loc} {code} {one_line(d.message)}")
    s = summary(results)
    infos = sum(1 for r in results for d in r.diagnostics if d.severity is Severity.INFO)
    text = (f"Checked {plural(s['files'], 'file')}: {plural(s['errors'], 'error')}, "
            f"{plural(s['warnings'], 'warning')}" + (f", {infos:,} info" if infos else "") + ".")
    if fixed:
        text += f" Fixed {plural(fixed, 'problem')}."
    if color:
        text = click.style(text, fg="red" if s["errors"] else "yellow" if s["warnings"] else "green")
    lines.append(text)
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic]) -> str:
    """``{"summary": {...}, "diagnostics": [...]}`` as the brief specifies: ``json.dumps(doc,
    indent=2, ensure_ascii=False)`` byte for byte, each diagnostic written by the C string encoder
    into one template (``indent`` makes the json module encode in Python, ~25 us an object: a
    quarter of a second at the end of a 10,000-skill report; a dict per diagnostic, another 8 us)."""
    enc, shown = _encode_str, printable
    fixed: dict[str, str] = {}  # a rule's messages repeat (10,000 skills, 1,300 distinct): each encoded once

    def encoded(text: str) -> str:
        found = fixed.get(text)
        if found is None:
            found = fixed[text] = enc(shown(text))
        return found

    severities = {s: enc(s.value) for s in Severity}
    objects = [_DIAGNOSTIC_OBJECT % (encoded(d.code), severities[d.severity], enc(shown(d.path)), int(d.line),
                                     int(d.column), encoded(d.message),
                                     "null" if d.skill is None else enc(shown(d.skill)))
               for d in diagnostics]
    return _indented_json({"summary": summary(results), "diagnostics": []}, "diagnostics", objects) + "\n"


def _indented_json(doc: dict[str, Any], listed: str, objects: list[str]) -> str:
    """``doc`` as ``json.dumps(doc, indent=2, ensure_ascii=False)`` with ``objects`` (each one written
    as that would write it, four spaces in) as the list ``doc[listed]``, which is empty."""
    head = json.dumps(doc, indent=2, ensure_ascii=False)
    marker = f'{_encode_str(listed)}: []'
    if not objects:
        return head
    at = head.rindex(marker)  # (the last: a summary value cannot come after the list)
    return f"{head[:at + len(marker) - 2]}[\n" + ",\n".join(objects) + f"\n  ]{head[at + len(marker):]}"


def _object_template(names: Sequence[str]) -> str:
    """A flat object's text as ``json.dumps(indent=2)`` writes it in a list in an object, a ``%s``
    for each value (written by the caller as JSON)."""
    return "    {\n" + ",\n".join(f"      {_encode_str(k).replace('%', '%%')}: %s" for k in names) + "\n    }"


_encode_str = json.encoder.encode_basestring  # (the C function, as json.dumps with ensure_ascii=False)
# A diagnostic's object in the report: ``Diagnostic.to_json``'s keys, in its order (render_json
# fills them in that order; ``test_report`` holds the two together).
DIAGNOSTIC_KEYS = ("code", "severity", "path", "line", "column", "message", "skill")
_DIAGNOSTIC_OBJECT = _object_template(DIAGNOSTIC_KEYS)


def gh_escape_data(value: str) -> str:
    """Escape an annotation message (actions/toolkit ``escapeData``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_escape_property(value: str) -> str:
    """Escape an annotation property value (actions/toolkit ``escapeProperty``)."""
    return gh_escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=…::message``."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for d in diagnostics:
        props = [f"file={gh_escape_property(printable(d.path) or '.')}"]
        if d.line:
            props.append(f"line={d.line}")
            if d.column:
                props.append(f"col={d.column}")
        props.append(f"title={gh_escape_property(d.code)}")
        out.append(f"::{level[d.severity]} {','.join(props)}::{gh_escape_data(d.code + ' ' + printable(d.message))}")
    s = summary(results)
    out.append(f"skillc: {plural(s['files'], 'file')} checked: {plural(s['errors'], 'error')}, "
               f"{plural(s['warnings'], 'warning')}.")
    return "\n".join(out) + "\n"


def sarif_uri(path: str) -> str:
    """A relative URI reference for a posix path (spaces, non-ASCII and odd bytes percent-encoded)."""
    if not path:
        return "."
    return quote(path.encode("utf-8", "surrogateescape"), safe="/-._~!$&'()*+,;=@")


def render_sarif(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic], src_root: str | None = None) -> str:
    """SARIF 2.1.0 as GitHub code scanning accepts it.

    Artifact URIs are relative (to ``%SRCROOT%``: the current directory, i.e. the repository in CI);
    ``src_root`` (an absolute ``file://`` URI) is recorded only when given, so the default output
    has no machine-specific paths.
    """
    used = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(used)}
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    rules = []
    for code in used:
        rule = RULES[code]
        rules.append({
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.rationale},
            "help": {
                "text": f"{rule.rationale}\n\nBad:\n{rule.bad}\n\nGood:\n{rule.good}",
                "markdown": f"{rule.rationale}\n\n**Bad**\n\n```\n{rule.bad}\n```\n\n**Good**\n\n```\n{rule.good}\n```",
            },
            "defaultConfiguration": {"level": level[rule.severity]},
            "properties": {"tags": sorted(rule.profiles)},
        })
    res = []
    for d in diagnostics:
        physical: dict = {"artifactLocation": {"uri": sarif_uri(d.path), "uriBaseId": "%SRCROOT%"}}
        if d.line:
            region = {"startLine": d.line}
            if d.column:
                region["startColumn"] = d.column
            physical["region"] = region
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": level[d.severity],
            "message": {"text": printable(d.message)},
            "locations": [{"physicalLocation": physical}],
        }
        if d.fix is not None:
            result["properties"] = {"fix": d.fix.description}
        res.append(result)
    run: dict = {
        "tool": {"driver": {"name": "skillc", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFO_URI, "rules": rules}},
        "results": res,
        "columnKind": "unicodeCodePoints",
    }
    if src_root:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": src_root.rstrip("/") + "/"}}
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
