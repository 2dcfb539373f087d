"""Skills as tool definitions (seed 002): one tool per skill, named ``skill_<flat name>``.

A step skill's ``inputs`` (a mapping of name to ``{type, description, required, default, enum}`` or a
list of such specs with a ``name``) become the tool's JSON Schema; any other skill takes a single
``intent`` string.  Names keep to each provider's limit: OpenAI and Anthropic allow
``[A-Za-z0-9_-]{1,64}``, MCP ``[A-Za-z0-9_.-]{1,128}``; a longer name is cut and ends with 8 hex
digits of its SHA-256, so names stay unique.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PROVIDERS = ("openai", "anthropic", "mcp")
NAME_LIMIT = {"openai": 64, "anthropic": 64, "mcp": 128}
PREFIX = "skill_"
_TYPES = ("string", "number", "integer", "boolean", "array", "object")
INTENT_DESCRIPTION = "What the user wants done with this skill, in their words."


@dataclass(frozen=True, slots=True)
class ToolSkill:
    """What a tool definition is made of: the skill's flat name, description and frontmatter."""

    name: str
    description: str
    meta: Mapping[str, Any]


def tool_name(flat_name: str, limit: int) -> str:
    name = PREFIX + flat_name.replace(".", "-")
    if len(name) <= limit:
        return name
    return name[:limit - 9] + "_" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _input_specs(inputs: Any) -> list[tuple[str, Mapping[str, Any]]]:
    if isinstance(inputs, Mapping):
        return [(str(k), v) for k, v in inputs.items() if isinstance(v, Mapping)]
    if isinstance(inputs, list):
        return [(str(v["name"]), v) for v in inputs if isinstance(v, Mapping) and isinstance(v.get("name"), str)]
    return []


def _property(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind = spec.get("type") if spec.get("type") in _TYPES else "string"
    prop: dict[str, Any] = {"type": kind}
    if kind == "array":
        prop["items"] = {"type": "string"}  # (seed 002 types no items: strings, the portable default)
    if isinstance(spec.get("description"), str):
        prop["description"] = spec["description"]
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        prop["enum"] = list(spec["enum"])
    if "default" in spec and spec["default"] is not None:
        prop["default"] = spec["default"]
    return prop


def input_schema(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's JSON Schema: the step skill's declared inputs, else one required ``intent``."""
    specs = _input_specs(meta.get("inputs"))
    if not specs:
        return {"type": "object", "properties": {"intent": {"type": "string", "description": INTENT_DESCRIPTION}},
                "required": ["intent"], "additionalProperties": False}
    required = [n for n, s in specs if s.get("required") is True]
    schema: dict[str, Any] = {"type": "object", "properties": {n: _property(s) for n, s in specs},
                              "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def tool_definition(provider: str, skill: ToolSkill) -> dict[str, Any]:
    name = tool_name(skill.name, NAME_LIMIT[provider])
    schema = input_schema(skill.meta)
    if provider == "openai":  # Chat Completions' tools entry (the Responses API takes the inner fields)
        return {"type": "function", "function": {"name": name, "description": skill.description,
                                                 "parameters": schema}}
    if provider == "anthropic":
        return {"name": name, "description": skill.description, "input_schema": schema}
    return {"name": name, "description": skill.description, "inputSchema": schema}


def tool_definitions(provider: str, skills: Sequence[ToolSkill]) -> list[dict[str, Any]]:
    """One definition per skill, in the order given."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}")
    return [tool_definition(provider, s) for s in skills]
