"""``skillc mcp``: serve a bundle to agents over MCP (issue 20).  Named ``mcp_server`` so that it
never shadows the ``mcp`` SDK it is built on; importing it needs the ``mcp`` extra."""

from __future__ import annotations

from .server import SkillsServer, build_server
from .state import BundleSource

__all__ = ["BundleSource", "SkillsServer", "build_server"]
