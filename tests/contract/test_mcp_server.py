"""`skillc mcp` driven by the official MCP SDK's own client, over stdio and streamable HTTP."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Literal

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra (pip install 'skillc[mcp]') is not installed")

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp_types import PaginatedRequestParams, Request, RequestParams  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from conftest import run_skillc, skillc_command, stop_process, write_skill  # noqa: E402
from mcp_fixture import build, make_repo  # noqa: E402
from skillc import Bundle  # noqa: E402

ANY = TypeAdapter(dict[str, Any])


class _UriParams(RequestParams):
    uri: str


class SkillsList(Request[PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: PaginatedRequestParams | None = None


class SkillsGet(Request[_UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class DirectoryRead(Request[_UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mcp")
    return build(make_repo(root), root / "dist")


def _stdio(dist: Path) -> Client:
    cmd = skillc_command()
    return Client(StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", str(dist)]))


def _run(dist: Path, body) -> Any:
    async def main():
        async with _stdio(dist) as client:
            return await body(client)
    return anyio.run(main)


def _text(result) -> list[str]:
    return [c.text for c in result.content]


def test_tools_have_portable_schemas(dist):
    import jsonschema

    tools = _run(dist, lambda c: c.list_tools())
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == {"browse_skills", "load_skill", "search_skills", "recall_memory"}
    for tool in tools.tools:
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        for prop in schema["properties"].values():  # one plain type each: no unions, no bare `true`
            assert prop["type"] in ("string", "integer") and prop["description"]
    assert by_name["load_skill"].input_schema["required"] == ["id"]


def test_browse_and_load_give_seed_004s_results(dist):
    b = Bundle.open(dist)

    async def body(c):
        return (await c.call_tool("browse_skills", {}), await c.call_tool("browse_skills", {"path": "tools"}),
                await c.call_tool("browse_skills", {"path": "tools", "query": "jest"}),
                await c.call_tool("browse_skills", {"path": "no/such"}),
                await c.call_tool("load_skill", {"id": "tools/guide"}),
                await c.call_tool("load_skill", {"id": "skills/pdf"}),
                await c.call_tool("load_skill", {"id": "tools/nope"}))
    root, tools, search, empty, guide, pdf, missing = _run(dist, body)
    assert json.loads(_text(root)[0]) == b.browse()
    assert json.loads(_text(tools)[0]) == b.browse("tools")
    found = json.loads(_text(search)[0])
    assert found["type"] == "search" and [s["id"] for s in found["skills"]] == ["js/testing"]  # query wins
    assert json.loads(_text(empty)[0]) == {"type": "listing", "path": "no/such", "subcollections": [], "skills": []}
    assert not empty.is_error
    loaded = json.loads(_text(guide)[0])
    assert loaded == b.load_skill("tools/guide")
    assert loaded["body"].startswith('<skill id="tools/guide">') and "<\\/skill>" in loaded["body"]
    assert len(_text(guide)) == 1  # no skill-memory
    pdf_texts = _text(pdf)
    assert pdf_texts[1] == b.skill_memory_block("skills/pdf") and pdf_texts[1].startswith("<skill-memory")
    assert missing.is_error and "skill not found: tools/nope" in _text(missing)[0]
    assert str(dist) not in _text(missing)[0]


def test_search_and_recall_rank_as_the_cli_does(dist):
    async def body(c):
        return (await c.call_tool("search_skills", {"query": "pytest tests fail", "top_k": 3}),
                await c.call_tool("recall_memory", {"query": "pdf forms merge", "top_k": 5}),
                await c.call_tool("recall_memory", {"query": "x", "category": "nonsense"}),
                await c.call_tool("search_skills", {"query": "   "}))
    search, recall, bad, blank = _run(dist, body)
    assert json.loads(_text(search)[0])["results"] == Bundle.open(dist).search("pytest tests fail", 3)
    cli = run_skillc("memory", "search", str(dist), "pdf forms merge", "--top-k", "5", "--json")
    assert json.loads(_text(recall)[0])["results"] == json.loads(cli.stdout)["results"]
    assert json.loads(_text(recall)[0])["results"]
    assert bad.is_error and "unknown category" in _text(bad)[0]
    assert blank.is_error and "empty query" in _text(blank)[0]


def test_resources_are_every_published_file_with_mime_types(dist):
    async def body(c):
        listed = await c.list_resources()
        read = await c.read_resource("skill://tools/guide/references/guide.md")
        script = await c.read_resource("skill://tools/guide/scripts/run.py")
        return listed, read, script
    listed, read, script = _run(dist, body)
    by_uri = {str(r.uri): r for r in listed.resources}
    assert by_uri["skill://tools/guide/SKILL.md"].mime_type == "text/markdown"
    assert by_uri["skill://tools/guide/scripts/run.py"].mime_type == "text/x-python"
    assert by_uri["skill://python/python-testing/SKILL.md"].name == "python-testing"
    assert len([u for u in by_uri if u.endswith("/SKILL.md")]) == 6
    assert read.contents[0].text == (dist / "api/files/tools/guide/references/guide.md").read_text()
    assert script.contents[0].mime_type == "text/x-python"


def test_skills_extension_entries_verify_against_what_is_served(dist):
    async def body(c):
        caps = c.server_capabilities
        listing = await c.session.send_request(SkillsList(), ANY)
        reads = {}
        for entry in listing["skills"]:
            for res in entry["resources"]:
                got = await c.read_resource(res["uri"])
                reads[res["uri"]] = got.contents[0].text.encode("utf-8")
        one = await c.session.send_request(SkillsGet(params=_UriParams(uri="skill://js/js-testing/SKILL.md")), ANY)
        folder = await c.session.send_request(
            DirectoryRead(params=_UriParams(uri="skill://tools/guide/references")), ANY)
        collection = await c.session.send_request(DirectoryRead(params=_UriParams(uri="skill://tools")), ANY)
        errors = []
        for req in (SkillsGet(params=_UriParams(uri="skill://tools/nope/SKILL.md")),
                    DirectoryRead(params=_UriParams(uri="skill://tools/guide/SKILL.md"))):
            try:
                await c.session.send_request(req, ANY)
            except mcp.MCPError as exc:
                errors.append(exc.error.code)
        return caps, listing, reads, one, folder, collection, errors
    caps, listing, reads, one, folder, collection, errors = _run(dist, body)
    assert caps.extensions["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    names = {e["frontmatter"]["name"]: e for e in listing["skills"]}
    assert set(names) == {"js-testing", "python-testing", "pdf", "plain", "guide", "summarise-notes"}
    for entry in listing["skills"]:
        assert entry["uri"].rsplit("/", 2)[1] == entry["frontmatter"]["name"]
        for res in entry["resources"]:
            data = reads[res["uri"]]
            assert res["digest"] == "sha256:" + hashlib.sha256(data).hexdigest() and res["size"] == len(data)
    # a skill whose leaf collides is served with its flat name in its SKILL.md, the rest as published
    assert b"name: js-testing\n" in reads["skill://js/js-testing/SKILL.md"]
    assert reads["skill://skills/pdf/SKILL.md"] == (dist / "api/files/skills/pdf/SKILL.md").read_bytes()
    assert names["pdf"]["frontmatter"]["skill-memory"]["enabled"] is True
    assert one["skill"] == names["js-testing"]
    assert folder["resources"] == [{"uri": "skill://tools/guide/references/guide.md", "name": "guide.md",
                                    "mimeType": "text/markdown", "size": 23}]
    assert [(r["name"], r["mimeType"]) for r in collection["resources"]] == [
        ("guide", "inode/directory"), ("summarise-notes", "inode/directory")]
    assert errors == [-32602, -32602]


def test_skill_ref_prompt_applies_the_reference(dist):
    async def body(c):
        return await c.get_prompt("skill_ref", {"message": "/tools/guide run it"}), \
            await c.get_prompt("skill_ref", {"message": "/tools/nope run it"})
    ok, missing = _run(dist, body)
    assert ok.messages[0].content.text == Bundle.open(dist).apply_references("/tools/guide run it").text
    assert missing.messages[0].content.text == "Skill 'tools/nope' not found\n\n/tools/nope run it"


def test_a_rebuilt_bundle_is_picked_up_by_a_running_server(tmp_path):
    repo = make_repo(tmp_path)
    dist = build(repo, tmp_path / "dist")

    async def body(c):
        before = json.loads(_text(await c.call_tool("browse_skills", {"path": "tools"}))[0])
        write_skill(repo, "tools/fresh", description="A new skill. Use when testing rebuilds.")
        build(repo, dist)
        after = json.loads(_text(await c.call_tool("browse_skills", {"path": "tools"}))[0])
        entry = await c.session.send_request(SkillsGet(params=_UriParams(uri="skill://tools/fresh/SKILL.md")), ANY)
        return before, after, entry
    before, after, entry = _run(dist, body)
    assert "tools/fresh" not in [s["id"] for s in before["skills"]]
    assert "tools/fresh" in [s["id"] for s in after["skills"]]
    assert entry["skill"]["frontmatter"]["name"] == "fresh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_on_loopback(dist):
    port = _free_port()
    proc = subprocess.Popen([*skillc_command(), "mcp", str(dist), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        async def main():
            async with Client(f"http://127.0.0.1:{port}/mcp") as c:
                return await c.call_tool("load_skill", {"id": "tools/guide"})
        result = anyio.run(main)
        assert json.loads(_text(result)[0]) == Bundle.open(dist).load_skill("tools/guide")
    finally:
        stop_process(proc)


def test_usage_errors_are_one_line(dist, tmp_path):
    r = run_skillc("mcp", str(tmp_path / "nothing"))
    assert r.returncode == 1 and "no such bundle directory" in r.stderr and "Traceback" not in r.stderr
    r = run_skillc("mcp", str(dist), "--http", "--host", "0.0.0.0")
    assert r.returncode == 2 and "--public" in r.stderr


def _wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_a_served_bundle_is_read_over_http(dist):
    """`skillc mcp http://…/api`: the bundle read from `skillc serve` on loopback, digests verified."""
    port = _free_port()
    web = subprocess.Popen([*skillc_command(), "serve", str(dist), "--port", str(port), "-q"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, web)
        cmd = skillc_command()
        params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", f"http://127.0.0.1:{port}/api"])

        async def main():
            async with Client(params) as c:
                loaded = await c.call_tool("load_skill", {"id": "skills/pdf"})
                entry = await c.session.send_request(
                    SkillsGet(params=_UriParams(uri="skill://tools/guide/SKILL.md")), ANY)
                files = {r["uri"]: (await c.read_resource(r["uri"])).contents[0].text.encode()
                         for r in entry["skill"]["resources"]}
                return loaded, entry, files
        loaded, entry, files = anyio.run(main)
    finally:
        stop_process(web)
    b = Bundle.open(dist)
    assert _text(loaded) == [json.dumps(b.load_skill("skills/pdf"), sort_keys=True, separators=(",", ":"),
                                        ensure_ascii=False), b.skill_memory_block("skills/pdf")]
    for res in entry["skill"]["resources"]:
        assert res["digest"] == "sha256:" + hashlib.sha256(files[res["uri"]]).hexdigest()
