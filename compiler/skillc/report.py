"""Lint reports: text, JSON, GitHub workflow annotations and SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Sequence

from . import __version__
from .lint import LintResult
from .model import Diagnostic, Severity
from .rules.registry import RULES

FORMATS = ("text", "json", "github", "sarif")
_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/skillc/skillc"


def _summary(results: Sequence[LintResult]) -> dict[str, int]:
    return {
        "skills": sum(len(r.items) for r in results),
        "errors": sum(r.count(Severity.ERROR) for r in results),
        "warnings": sum(r.count(Severity.WARNING) for r in results),
    }


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def render_text(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic], color: bool, fixed: int = 0) -> str:
    import click

    lines = []
    for d in diagnostics:
        code = click.style(d.code, fg=_COLORS[d.severity], bold=True) if color else d.code
        loc = f"{d.path}:{d.line}:{d.column}:"
        lines.append(f"{click.style(loc, bold=True) if color else loc} {code} {d.message}")
    s = _summary(results)
    infos = sum(1 for d in diagnostics if d.severity is Severity.INFO)
    summary = (f"Checked {_plural(s['skills'], 'file')}: {_plural(s['errors'], 'error')}, "
               f"{_plural(s['warnings'], 'warning')}" + (f", {infos:,} info" if infos else "") + ".")
    if fixed:
        summary += f" Fixed {_plural(fixed, 'problem')}."
    if color:
        summary = click.style(summary, fg="red" if s["errors"] else "yellow" if s["warnings"] else "green")
    lines.append(summary)
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic]) -> str:
    doc = {"summary": _summary(results), "diagnostics": [d.to_json() for d in diagnostics]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _gh_escape(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render_github(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic]) -> str:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    out = []
    for d in diagnostics:
        props = f"file={_gh_escape(d.path, True)},line={max(d.line, 1)},col={max(d.column, 1)},title={_gh_escape(d.code, True)}"
        out.append(f"::{level[d.severity]} {props}::{_gh_escape(d.code + ' ' + d.message)}")
    return "\n".join(out) + ("\n" if out else "")


def render_sarif(results: Sequence[LintResult], diagnostics: Sequence[Diagnostic], src_root: str | None = None) -> str:
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
        res.append({
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": level[d.severity],
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": d.path or ".", "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": max(d.line, 1), "startColumn": max(d.column, 1)},
                }
            }],
        })
    run: dict = {
        "tool": {"driver": {"name": "skillc", "version": __version__, "informationUri": INFO_URI, "rules": rules}},
        "results": res,
        "columnKind": "unicodeCodePoints",
    }
    if src_root:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": src_root.rstrip("/") + "/"}}
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
