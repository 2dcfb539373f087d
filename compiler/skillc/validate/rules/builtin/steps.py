"""Step skills (seed 002), codes T5xx.

A step skill is a data object: ``inputs`` (declared parameters with types) and ordered ``steps``,
each calling exactly one ``tool`` or one ``script`` with an ``args`` template.  It is exposed to the
model as a tool named ``skill_<name>``.

Template syntax (seed 002 leaves it open; skillc fixes it): a placeholder is ``{{ name }}`` or
``{{ inputs.name }}`` inside any string of ``args`` (at any depth), where ``name`` is a declared
input (``[A-Za-z_][A-Za-z0-9_-]*``).  Spaces inside the braces are optional.  There is no
escaping, no filters and no expressions: anything else between ``{{`` and ``}}`` is reported.

```yaml
inputs:
  query: {type: string, required: true}
  limit: {type: integer, default: 5}
steps:
  - tool: search_notes
    args: {query: "{{ query }}", limit: "{{limit}}"}
  - script: scripts/summarise.py
    args: ["--input", "{{ inputs.query }}"]
```
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Iterator

from ....model import ItemKind, Severity
from ....parse.document import type_name
from ..registry import Finding, RuleContext, rule
from . import schema

REC = frozenset({"recommended"})
SKILL = frozenset({ItemKind.SKILL})
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)
PLACEHOLDER_NAME = re.compile(r"^\s*(?:inputs\.)?([A-Za-z_][A-Za-z0-9_-]*)\s*$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # function-calling APIs (OpenAI, Anthropic)
SKILL_TOOL_PREFIX = "skill_"


def declared_inputs(meta: Any) -> dict[str, tuple]:
    """Input name → key path of its declaration (mapping or list form)."""
    inputs = meta.get("inputs")
    out: dict[str, tuple] = {}
    if isinstance(inputs, dict):
        for name in inputs:
            out[str(name)] = ("inputs", name)
    elif isinstance(inputs, list):
        for i, spec in enumerate(inputs):
            if isinstance(spec, dict) and isinstance(spec.get("name"), str):
                out.setdefault(spec["name"], ("inputs", i))
    return out


def _steps(ctx: RuleContext) -> list[tuple[int, dict]]:
    steps = ctx.meta.get("steps")
    if not isinstance(steps, list):
        return []
    return [(i, s) for i, s in enumerate(steps) if isinstance(s, dict)]


def _strings(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, path + (i,))


def placeholders(ctx: RuleContext) -> Iterator[tuple[tuple, str, str | None]]:
    """Every ``{{…}}`` in every step's args: (key path, raw text, input name or None if malformed)."""
    for i, step in _steps(ctx):
        if "args" not in step:
            continue
        for path, text in _strings(step["args"], ("steps", i, "args")):
            if "{{" not in text:
                continue
            for m in PLACEHOLDER.finditer(text):
                name = PLACEHOLDER_NAME.match(m.group(1))
                yield path, m.group(0), name.group(1) if name else None


_STEP_DOC = """
    inputs:
      query: {type: string}
    steps:
      - tool: search_notes
        args: {query: "{{ query }}"}
"""


@rule(
    "T501", "step-inputs-invalid", "`inputs` is not a valid list or mapping of typed inputs.",
    rationale="""
        Seed 002 step skills declare their parameters in `inputs`: a mapping of name to
        `{type, description, required, default, enum}`, or a list of the same with a `name`.
        `type` is a JSON Schema type (string, number, integer, boolean, array, object), because the
        skill is exposed to the model as a tool whose parameters are a JSON Schema.
    """,
    bad="""
        inputs:
          query: text
    """,
    good="""
        inputs:
          query: {type: string, required: true}
    """,
    profiles=REC, kinds=SKILL, keys=("inputs",),
)
def step_inputs_invalid(ctx: RuleContext):
    if "inputs" not in ctx.meta:
        return
    for issue in schema.issues(ctx.meta["inputs"], "inputs", ("inputs",)):
        yield Finding(issue.message, ctx.key(*issue.path))
    inputs = ctx.meta["inputs"]
    if isinstance(inputs, list):
        seen: set[str] = set()
        for i, spec in enumerate(inputs):
            name = spec.get("name") if isinstance(spec, dict) else None
            if isinstance(name, str):
                if name in seen:
                    yield Finding(f"input {name!r} is declared twice", ctx.key("inputs", i))
                seen.add(name)


@rule(
    "T502", "steps-invalid", "`steps` is not a non-empty list of step mappings.",
    rationale="""
        Seed 002: ordered steps, each a mapping with `tool` or `script`, an optional `args` template
        (a mapping, a list or a string) and optional `id`, `name`, `description`. Unknown keys are
        typos the runner would ignore.
    """,
    bad="""
        steps:
          tool: search_notes
    """,
    good=_STEP_DOC, profiles=REC, kinds=SKILL, keys=("steps",),
)
def steps_invalid(ctx: RuleContext):
    if "steps" not in ctx.meta:
        return
    for issue in schema.issues(ctx.meta["steps"], "steps", ("steps",)):
        if issue.validator != "oneOf":  # T503
            yield Finding(issue.message, ctx.key(*issue.path))


@rule(
    "T503", "step-tool-or-script", "A step has both `tool` and `script`, or neither.",
    rationale="Each step does one thing: call a tool or run a script (seed 002). Both or neither is ambiguous.",
    bad="""
        steps:
          - tool: search_notes
            script: scripts/search.py
    """,
    good=_STEP_DOC, profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_tool_or_script(ctx: RuleContext):
    for i, step in _steps(ctx):
        has = [k for k in ("tool", "script") if k in step]
        if len(has) != 1:
            what = "both 'tool' and 'script'" if has else "neither 'tool' nor 'script'"
            yield Finding(f"step {i + 1} has {what}; give exactly one", ctx.key("steps", i))


@rule(
    "T504", "step-placeholder-undeclared", "An args placeholder does not name a declared input.",
    rationale="""
        `{{ name }}` (or `{{ inputs.name }}`) in `args` is replaced by the input's value when the
        step runs; a name that is not in `inputs` stays unreplaced or fails the call. Anything
        other than a name between the braces is not supported.
    """,
    bad="""
        inputs:
          query: {type: string}
        steps:
          - tool: search_notes
            args: {query: "{{ qurey }}"}
    """,
    good=_STEP_DOC, profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_placeholder_undeclared(ctx: RuleContext):
    declared = declared_inputs(ctx.meta)
    for path, raw, name in placeholders(ctx):
        if name is None:
            yield Finding(f"placeholder {raw!r} must be {{{{ input_name }}}}", ctx.value(*path))
        elif name not in declared:
            known = ", ".join(sorted(declared)) or "none declared"
            yield Finding(f"placeholder {raw!r} names no declared input (inputs: {known})", ctx.value(*path))


@rule(
    "T505", "step-tool-unknown", "A step calls a tool that is not in the configured tools list.",
    rationale="""
        Seed 002 warns that user-defined skills may reference disabled or missing tools. List the
        host's tools in `[lint] tools = [...]` (skills.toml) and skillc checks every step's `tool`
        against it. When the list is empty (the default) this check is skipped, because skillc
        cannot know the host's tools.
    """,
    bad="tools = [\"search_notes\"] and a step with tool: search_note",
    good="tools = [\"search_notes\"] and a step with tool: search_notes", profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_tool_unknown(ctx: RuleContext):
    tools = ctx.settings.tools
    if not tools:
        return
    import difflib

    for i, step in _steps(ctx):
        tool = step.get("tool")
        if isinstance(tool, str) and tool not in tools and not tool.startswith(SKILL_TOOL_PREFIX):
            close = difflib.get_close_matches(tool, tools, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            yield Finding(f"step {i + 1} calls tool {tool!r}, which is not in [lint] tools{hint}",
                          ctx.value("steps", i, "tool"))


@rule(
    "T506", "step-calls-skill-tool", "A step calls a `skill_`-prefixed tool (another skill).",
    rationale="""
        Seed 002 exposes every skill as a tool named `skill_<name>`, a prefix reserved for skills;
        cross-skill calls are a non-goal of v1 (no branching between skills). A step must call a
        raw tool or a script.
    """,
    bad="""
        steps:
          - tool: skill_summarise
    """,
    good="""
        steps:
          - tool: summarise_text
    """,
    profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_calls_skill_tool(ctx: RuleContext):
    for i, step in _steps(ctx):
        tool = step.get("tool")
        if isinstance(tool, str) and tool.startswith(SKILL_TOOL_PREFIX):
            yield Finding(f"step {i + 1} calls {tool!r}; the 'skill_' prefix is reserved for skills exposed as "
                          "tools, and steps cannot call other skills", ctx.value("steps", i, "tool"))


@rule(
    "T507", "step-skill-tool-name-invalid", "The tool name `skill_<name>` would be invalid.",
    rationale="""
        A step skill is exposed as the tool `skill_<name>`, and function-calling APIs accept tool
        names matching `^[a-zA-Z0-9_-]{1,64}$`: so the skill name must be at most 58 characters of
        those, and should not itself start with `skill_` (`skill_skill_…`).
    """,
    bad="a step skill named skill_search", good="a step skill named search-notes", profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_skill_tool_name_invalid(ctx: RuleContext):
    if "steps" not in ctx.meta:
        return
    name = ctx.meta.get("name")
    if not isinstance(name, str) or not name.strip():
        return
    tool = SKILL_TOOL_PREFIX + name.strip()
    if not TOOL_NAME.match(tool):
        yield Finding(f"this step skill would be exposed as tool {tool!r}, which is not a valid tool name "
                      "(letters, digits, '_' and '-', at most 64 characters)", ctx.value("name"))
    elif name.startswith(SKILL_TOOL_PREFIX):
        yield Finding(f"name {name!r} already starts with 'skill_'; the tool would be {tool!r}", ctx.value("name"))


@rule(
    "T508", "step-input-unused", "A declared input is used by no step.",
    rationale="An input no placeholder reads is asked of the user (or the model) for nothing; usually a typo.",
    bad="""
        inputs:
          query: {type: string}
          limit: {type: integer}
        steps:
          - tool: search_notes
            args: {query: "{{ query }}"}
    """,
    good=_STEP_DOC, severity=Severity.WARNING, profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_input_unused(ctx: RuleContext):
    if "steps" not in ctx.meta:
        return
    used = {name for _, _, name in placeholders(ctx) if name}
    for name, path in declared_inputs(ctx.meta).items():
        if name not in used:
            yield Finding(f"input {name!r} is declared but no step uses {{{{ {name} }}}}", ctx.key(*path))


@rule(
    "T509", "step-script-invalid", "A step's `script` is absolute, leaves the skill folder or does not exist.",
    rationale="""
        Scripts run from the skill's own folder (`scripts/…`); an absolute path or `..` reaches
        outside what is published with the skill, and a missing file fails at run time. skillc never
        runs the script.
    """,
    bad="""
        steps:
          - script: ../shared/run.sh
    """,
    good="""
        steps:
          - script: scripts/run.sh
    """,
    profiles=REC, kinds=SKILL, keys=("steps",),
)
def step_script_invalid(ctx: RuleContext):
    for i, step in _steps(ctx):
        script = step.get("script")
        if not isinstance(script, str) or not script.strip():
            continue
        path = script.strip()
        if not _is_skill_file(ctx, posixpath.normpath(path.replace("\\", "/"))):
            path = path.split()[0]  # `scripts/run.sh --flag`: the file is the first word (`my script.py`: the whole)
        norm = posixpath.normpath(path.replace("\\", "/"))
        if posixpath.isabs(norm) or re.match(r"^[A-Za-z]:", norm):
            yield Finding(f"step {i + 1} script {path!r} is an absolute path; use a path inside the skill",
                          ctx.value("steps", i, "script"))
        elif norm == ".." or norm.startswith("../"):
            yield Finding(f"step {i + 1} script {path!r} leaves the skill folder", ctx.value("steps", i, "script"))
        elif not _is_skill_file(ctx, norm):
            yield Finding(f"step {i + 1} script {path!r} does not exist in the skill folder",
                          ctx.value("steps", i, "script"))


def _is_skill_file(ctx: RuleContext, rel: str) -> bool:
    """A file of the skill as its listing has it (the build's: what it publishes), like B704's
    link targets; the file system decides only when the listing stopped at its size limit."""
    from .content import skill_files

    listed = skill_files(ctx)
    if rel in listed.files:  # (a link too: discovery reports one that leads nowhere, D102)
        return True
    return listed.truncated and (ctx.skill_dir / rel).is_file()


__all__ = ["declared_inputs", "placeholders", "type_name"]
