"""`skillc mcp` driven by the real MCP Inspector CLI (npm @modelcontextprotocol/inspector 2.12.0 on
Node 22, installed by tests/setup/mcp.sh under .clients/)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra (pip install 'skillc[mcp]') is not installed")

from conftest import PROJECT, skillc_command  # noqa: E402
from mcp_fixture import build, make_repo  # noqa: E402

NODE = PROJECT / ".clients/node22/node_modules/node/bin/node"
INSPECTOR = PROJECT / ".clients/mcp-inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    if not (NODE.is_file() and INSPECTOR.is_file()):
        pytest.skip("the MCP Inspector is not installed (run tests/setup/mcp.sh)")
    root = tmp_path_factory.mktemp("inspector")
    return build(make_repo(root), root / "dist")


def inspect(dist: Path, *args: str) -> subprocess.CompletedProcess:
    # (a catalog file of its own: the Inspector would otherwise write ~/.mcp-inspector/mcp.json)
    env = {"PATH": f"{NODE.parent}:/usr/bin:/bin", "MCP_CATALOG_PATH": str(dist.parent / "catalog.json"),
           "HOME": str(dist.parent)}
    # (--connect-timeout: the Inspector gives a server 15 s to start, which a loaded CI machine can exceed)
    return subprocess.run([str(NODE), str(INSPECTOR), "--cli", "--connect-timeout", "120000", *skillc_command(),
                           "mcp", str(dist), *args], capture_output=True, text=True, timeout=300, env=env)


def test_tools_list_strict_reports_no_portability_problem(dist):
    r = inspect(dist, "--method", "tools/list", "--strict")
    assert r.returncode == 0, r.stderr
    assert {t["name"] for t in json.loads(r.stdout)["tools"]} == {"browse_skills", "load_skill", "search_skills",
                                                                  "recall_memory"}
    assert "Warning" not in r.stderr and "Error" not in r.stderr


@pytest.mark.parametrize("tool,args,expect", [
    ("browse_skills", ["path=tools"], '"type":"listing"'),
    ("load_skill", ["id=tools/guide"], '<skill id=\\"tools/guide\\">'),
    ("search_skills", ["query=pytest tests"], "python/testing"),
    ("recall_memory", ["query=pnpm install"], "pref-pnpm"),
])
def test_tools_call(dist, tool, args, expect):
    r = inspect(dist, "--method", "tools/call", "--tool-name", tool, "--tool-arg", *args, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout)["result"]
    assert result["isError"] is False and expect in result["content"][0]["text"]


def test_an_unknown_skill_is_a_tool_error(dist):
    r = inspect(dist, "--method", "tools/call", "--tool-name", "load_skill", "--tool-arg", "id=tools/nope",
                "--format", "json")
    assert r.returncode == 5 and "skill not found: tools/nope" in r.stdout + r.stderr


@pytest.mark.parametrize("era", [(), ("--protocol-era", "auto")], ids=["2025-11-25", "2026-07-28"])
def test_skills_list_verifies_every_digest(dist, era):
    r = inspect(dist, *era, "--method", "skills/list", "--verify", "--require-digests")
    assert r.returncode == 0, r.stdout + r.stderr
    reports = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == 6 and all(rep["ok"] and rep["outcome"] == "verified" for rep in reports)
    assert sum(len(rep["files"]) for rep in reports) == 8


def test_skills_get_and_directory_read(dist):
    r = inspect(dist, "--protocol-era", "auto", "--method", "skills/get", "--uri",
                "skill://python/python-testing/SKILL.md", "--verify", "--require-digests")
    assert r.returncode == 0, r.stdout + r.stderr
    r = inspect(dist, "--protocol-era", "auto", "--method", "resources/directory/read", "--uri",
                "skill://tools/guide/scripts")
    assert r.returncode == 0 and json.loads(r.stdout)["resources"][0]["uri"] == "skill://tools/guide/scripts/run.py"
