"""``skillc mcp``: a bundle as an MCP server (official ``mcp`` SDK 2.x, ``MCPServer``).

* tools ``browse_skills``, ``load_skill`` (seed 004's results and failure semantics), ``search_skills``
  (the bundle's BM25 index, as ``skillc search``) and ``recall_memory`` (seed 000's relevance score,
  as ``skillc memory search``);
* resources: every published file of every skill, ``skill://<skill path>/<file>`` (``catalog``);
* the skills extension ``io.modelcontextprotocol/skills`` (``extension``);
* a prompt per ``/skill-ref`` turn: ``skill_ref`` runs ``Bundle.apply_references``.

Resources are listed and read from the bundle on each request (nothing is registered per file), so
a server starts without reading a skill and a rebuilt bundle is what the next request sees.
"""

from __future__ import annotations

import base64
import functools
import json
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    ListResourcesResult,
    ReadResourceResult,
    Resource,
    TextResourceContents,
)
from pydantic import Field

from ..bundle import UnknownSkill
from ..emit.render.meerkat import browse_result, tool_json
from ..errors import SkillcError
from ..version import __version__
from .catalog import SKILL_FILE, ServedFile, locate, uri_path
from .extension import SkillsExtension, advertise_on_handshake, ttl_fields
from .state import BundleSource, ServedSkill, Snapshot

RESOURCES_PAGE = 1000  # resources per resources/list page
_CATEGORIES = ("preference", "convention", "pattern", "correction", "fact")


class SkillsServer(MCPServer):
    """``MCPServer`` whose resources are the bundle's files, listed and read on demand."""

    def __init__(self, source: BundleSource, **kwargs: Any):
        self.source = source
        super().__init__(extensions=[SkillsExtension(source)], middleware=[advertise_on_handshake], **kwargs)

    async def _handle_list_resources(self, ctx, params) -> ListResourcesResult:
        """Every skill's files, whole skills per page (the cursor is the index of the next skill)."""
        snap = self.source.current()
        ids = sorted(snap.places, key=lambda i: i.encode("utf-8", "surrogatepass"))
        n = _cursor(params.cursor if params is not None else None)
        rows: list[Resource] = []
        while n < len(ids) and len(rows) < RESOURCES_PAGE:
            served = snap.served(ids[n])
            rows += [_resource(served, f) for f in served.files]
            n += 1
        return ListResourcesResult(resources=rows, next_cursor=str(n) if n < len(ids) else None,
                                   **ttl_fields(self.source))

    async def _handle_read_resource(self, ctx, params) -> ReadResourceResult:
        uri = str(params.uri)
        snap = self.source.current()
        found = _find_file(snap, uri)
        if found is None:
            raise MCPError(code=INVALID_PARAMS, message=f"No skill file is served at {uri}", data={"uri": uri})
        skill_id, f = found
        try:
            data = snap.read(skill_id, f.path)
        except SkillcError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc), data={"uri": uri}) from None
        try:
            content: TextResourceContents | BlobResourceContents = TextResourceContents(
                uri=uri, text=data.decode("utf-8"), mime_type=f.mime_type)
        except UnicodeDecodeError:
            content = BlobResourceContents(uri=uri, blob=base64.b64encode(data).decode("ascii"), mime_type=f.mime_type)
        return ReadResourceResult(contents=[content], **ttl_fields(self.source))


def _cursor(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise MCPError(code=INVALID_PARAMS, message=f"invalid cursor {cursor!r}")
    return int(cursor)


def _resource(served: ServedSkill, f: ServedFile) -> Resource:
    if f.path == SKILL_FILE:
        fm = served.skill_file.frontmatter
        return Resource(uri=served.place.uri(f.path), name=served.place.name, mime_type=f.mime_type, size=f.size,
                        description=str(fm.get("description", "")))
    return Resource(uri=served.place.uri(f.path), name=f.path, mime_type=f.mime_type, size=f.size)


def _find_file(snap: Snapshot, uri: str):
    path = uri_path(uri)
    hit = locate(path, snap.by_path) if path else None
    if hit is None:
        return None
    place, rel = hit
    served = snap.served(place.skill_id)
    for f in served.files:
        if f.path == rel:
            return place.skill_id, f
    return None


def _on_loop(fn, remote: bool):
    """``fn`` as a coroutine: run on the event loop for a local bundle (a call reads cached files in well
    under a millisecond, and the SDK's hop to a worker thread for a plain function cost more than the
    call), in a worker thread for a served one (a request may wait on the network)."""
    @functools.wraps(fn)
    async def run(**kwargs):
        if remote:
            return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs))
        return fn(**kwargs)
    return run


def _tool_error(exc: SkillcError) -> ToolError:
    return ToolError(str(exc) + (f" ({exc.hint})" if exc.hint else ""))


def build_server(source: BundleSource) -> SkillsServer:
    """The server for a bundle: tools, resources, the skills extension and the ``skill_ref`` prompt."""
    server = SkillsServer(source, name="skillc", version=__version__,
                          instructions="Skills from a skillc bundle. browse_skills lists collections and skills, "
                                       "search_skills ranks them for a task, load_skill loads one's instructions; "
                                       "recall_memory searches the bundle's frozen memories.")

    def browse_skills(
        path: Annotated[str, Field(description='Collection path to browse (e.g. "extraction"); empty for the root.')] = "",
        query: Annotated[str, Field(description="Search across skill names and descriptions (wins over path).")] = "",
    ) -> str:
        """Browse available skill collections or search for skills."""
        b = source.current().bundle
        try:
            return browse_result(b.skills(), b.collections(), path or None, query or None)
        except SkillcError as exc:
            raise _tool_error(exc) from None

    def load_skill(
        id: Annotated[str, Field(description='Canonical skill ID (e.g. "extraction/email-extractor").')],
    ) -> list[str]:
        """Load a skill's full instructions into the conversation."""
        b = source.current().bundle
        try:
            result = tool_json(b.load_skill(id))
            memory = b.skill_memory_block(id)
        except UnknownSkill:  # (Meerkat's message; the bundle's location is the server's business)
            raise ToolError(f"skill not found: {id}") from None
        except SkillcError as exc:
            raise _tool_error(exc) from None
        # (seed 003 appends the block to the skill tool's result: here a second text item, so the
        # first stays Meerkat's JSON)
        return [result, memory] if memory else [result]

    def search_skills(
        query: Annotated[str, Field(description="Words describing the task.")],
        top_k: Annotated[int, Field(description="How many skills to return.", ge=1, le=100)] = 10,
    ) -> str:
        """Rank the bundle's skills for a task (BM25 over name, description, tags and body)."""
        try:
            results = source.current().bundle.search(query, top_k)
        except SkillcError as exc:
            raise _tool_error(exc) from None
        return json.dumps({"query": query, "results": results}, ensure_ascii=False)

    def recall_memory(
        query: Annotated[str, Field(description="What to recall.")],
        namespace: Annotated[str, Field(description="global, project/<id>, conversation/<id>, skill/<id>, or "
                                                    "a kind (project); empty for all.")] = "",
        category: Annotated[str, Field(description="preference, convention, pattern, correction or fact; empty "
                                                   "for all.")] = "",
        top_k: Annotated[int, Field(description="How many memories to return.", ge=1, le=100)] = 10,
    ) -> str:
        """Search the bundle's frozen memories (0.40 similarity, 0.25 keywords, 0.20 importance, 0.15 recency)."""
        if category and category not in _CATEGORIES:
            raise ToolError(f"unknown category {category!r} (choose {', '.join(_CATEGORIES)})")
        try:
            hits = source.current().bundle.memory.search(query, namespace=namespace or None,
                                                         category=category or None, top_k=top_k)
        except SkillcError as exc:
            raise _tool_error(exc) from None
        return json.dumps({"query": query, "results": [h.to_json() for h in hits]}, ensure_ascii=False)

    def skill_ref(message: Annotated[str, Field(description="A user message, e.g. /extraction/email-extractor "
                                                            "pull the dates")]) -> str:
        """Apply a /skill-ref at the start of a message: the skill's block, then the rest of the message."""
        applied = source.current().bundle.apply_references(message)
        failed = applied.failed
        return applied.text if not failed else f"{failed[0].error}\n\n{applied.text}"

    for fn in (browse_skills, load_skill, search_skills, recall_memory):
        server.add_tool(_on_loop(fn, source.remote), structured_output=False)
    server.prompt(name="skill_ref")(_on_loop(skill_ref, source.remote))
    return server

