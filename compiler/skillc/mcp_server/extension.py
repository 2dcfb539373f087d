"""The MCP skills extension ``io.modelcontextprotocol/skills`` (SEP-2640): ``skills/list``,
``skills/get`` and ``resources/directory/read`` over the bundle's ``skill://`` namespace."""

from __future__ import annotations

from typing import Any

from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams, RequestParams

from .catalog import (
    DIRECTORY_MIME,
    SKILL_FILE,
    directory_children,
    locate,
    merge_children,
    namespace_children,
    skill_entry,
    uri_path,
)
from .state import BundleSource

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILLS_PAGE = 100  # skills per skills/list page (each entry reads its SKILL.md once)


def ttl_fields(source: BundleSource) -> dict[str, Any]:
    """The cache hint every listing carries: a local bundle may be rebuilt at any time (0 ms), a
    served one is read again after the server's own ``ttl``."""
    return {"ttl_ms": int(source.ttl * 1000) if source.remote else 0, "cache_scope": "public"}


def _wire_ttl(source: BundleSource) -> dict[str, Any]:
    fields = ttl_fields(source)
    return {"ttlMs": fields["ttl_ms"], "cacheScope": fields["cache_scope"]}


async def advertise_on_handshake(ctx, call_next):
    """Server middleware: the extension in the ``initialize`` result's capabilities too.  The SDK keeps
    ``capabilities.extensions`` for 2026-07-28 connections only (its 2025-11-25 schema has no such
    field), but clients of that revision read it there (the Inspector's default era does): an extra
    field, which a client that knows nothing of it ignores."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
        caps = result["capabilities"]
        if SKILLS_EXTENSION not in (caps.get("extensions") or {}):
            extensions = {**(caps.get("extensions") or {}), SKILLS_EXTENSION: {"directoryRead": True}}
            result = {**result, "capabilities": {**caps, "extensions": extensions}}
    return result


class GetSkillParams(RequestParams):
    uri: str


class DirectoryReadParams(PaginatedRequestParams):
    uri: str


class SkillsExtension(Extension):
    identifier = SKILLS_EXTENSION

    def __init__(self, source: BundleSource):
        self.source = source

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    def methods(self):
        return (MethodBinding("skills/list", PaginatedRequestParams, self._list),
                MethodBinding("skills/get", GetSkillParams, self._get),
                MethodBinding("resources/directory/read", DirectoryReadParams, self._directory))

    def _entry(self, snap, skill_id: str) -> dict[str, Any]:
        served = snap.served(skill_id)
        return skill_entry(served.place, served.skill_file, served.files)

    async def _list(self, ctx, params: PaginatedRequestParams | None) -> dict[str, Any]:
        snap = self.source.current()
        ids = sorted(snap.places, key=lambda i: i.encode("utf-8", "surrogatepass"))
        cursor = params.cursor if params is not None else None
        start = int(cursor) if cursor and cursor.isdigit() else 0
        if cursor is not None and not cursor.isdigit():
            raise MCPError(code=INVALID_PARAMS, message=f"invalid cursor {cursor!r}")
        page = ids[start:start + SKILLS_PAGE]
        out: dict[str, Any] = {"skills": [self._entry(snap, i) for i in page], **_wire_ttl(self.source)}
        if start + SKILLS_PAGE < len(ids):
            out["nextCursor"] = str(start + SKILLS_PAGE)
        return out

    async def _get(self, ctx, params: GetSkillParams) -> dict[str, Any]:
        snap = self.source.current()
        path = uri_path(params.uri)
        hit = locate(path, snap.by_path) if path else None
        if hit is None or hit[1] != SKILL_FILE:
            raise MCPError(code=INVALID_PARAMS, message=f"No skill is served at {params.uri}")
        return {"skill": self._entry(snap, hit[0].skill_id), **_wire_ttl(self.source)}

    async def _directory(self, ctx, params: DirectoryReadParams) -> dict[str, Any]:
        """A folder of a skill (its own files and sub-folders, and a nested skill's root), or a folder of
        the namespace above skills (a collection: its sub-collections and skills' roots)."""
        snap = self.source.current()
        path = uri_path(params.uri)
        if path is None:
            raise MCPError(code=INVALID_PARAMS, message=f"{params.uri} is not a directory resource")
        hit = locate(path, snap.by_path) if path else None
        files = None
        if hit is not None:
            served = snap.served(hit[0].skill_id)
            files = directory_children(hit[0], served.files, hit[1])
        nested = namespace_children(path, snap.by_path)
        if files is None and not nested:
            raise MCPError(code=INVALID_PARAMS, message=f"{params.uri} is not a directory resource")
        return {"resources": merge_children(files or (), nested), **_wire_ttl(self.source)}


__all__ = ["DIRECTORY_MIME", "SKILLS_EXTENSION", "SkillsExtension", "ttl_fields"]
