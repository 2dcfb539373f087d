"""`skillc render BUNDLE --tools --format openai|anthropic|mcp`: one tool definition per skill (seed 002),
checked against the providers' own SDK types (offline) and JSON Schema's meta-schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from pydantic import TypeAdapter

from conftest import run_skillc, write_skill
from mcp_fixture import build, make_repo


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tools")
    repo = make_repo(root)
    write_skill(repo, "long/" + "a" * 64)  # a 64-character name: skill_ + it exceeds OpenAI's 64
    return build(repo, root / "dist")


def render(dist: Path, fmt: str) -> list[dict]:
    r = run_skillc("render", str(dist), "--tools", "--format", fmt)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_openai_definitions_are_valid_chat_completion_tools(dist):
    pytest.importorskip("openai", reason="the test extra's openai package is not installed")
    from openai.types.chat import ChatCompletionToolParam

    tools = render(dist, "openai")
    adapter = TypeAdapter(ChatCompletionToolParam)
    for tool in tools:
        adapter.validate_python(tool, strict=True)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool["function"]["name"])
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    names = [t["function"]["name"] for t in tools]
    assert len(set(names)) == len(names) == 7
    assert {"skill_js-testing", "skill_python-testing", "skill_pdf", "skill_summarise-notes"} <= set(names)
    assert any(len(n) == 64 and n.startswith("skill_aaa") for n in names)


def test_anthropic_definitions_are_valid_tool_params(dist):
    pytest.importorskip("anthropic", reason="the test extra's anthropic package is not installed")
    from anthropic.types import ToolParam

    adapter = TypeAdapter(ToolParam)
    for tool in render(dist, "anthropic"):
        adapter.validate_python(tool, strict=True)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool["name"])
        jsonschema.Draft202012Validator.check_schema(tool["input_schema"])


def test_mcp_definitions_are_valid_mcp_tools(dist):
    mcp_types = pytest.importorskip("mcp_types")
    tools = render(dist, "mcp")
    for tool in tools:
        mcp_types.Tool.model_validate(tool)
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", tool["name"])
    assert "skill_" + "a" * 64 in {t["name"] for t in tools}  # (MCP allows 128)


def test_a_step_skills_inputs_become_its_schema_and_others_take_an_intent(dist):
    by_name = {t["name"]: t["input_schema"] for t in render(dist, "anthropic")}
    step = by_name["skill_summarise-notes"]
    assert step == {"type": "object", "additionalProperties": False, "required": ["query"], "properties": {
        "query": {"type": "string", "description": "What the notes are about"},
        "limit": {"type": "integer", "description": "How many notes", "default": 5},
        "style": {"type": "string", "enum": ["short", "long"]}}}
    validator = jsonschema.Draft202012Validator(step)
    assert validator.is_valid({"query": "q", "limit": 3}) and not validator.is_valid({"limit": 3})
    assert by_name["skill_pdf"]["required"] == ["intent"]
    assert by_name["skill_pdf"]["properties"]["intent"]["type"] == "string"


def test_tools_needs_a_provider_format(dist):
    r = run_skillc("render", str(dist), "--tools")
    assert r.returncode == 2 and "--format openai, anthropic or mcp" in r.stderr
    r = run_skillc("render", str(dist), "--inventory", "--format", "openai")
    assert r.returncode == 2
