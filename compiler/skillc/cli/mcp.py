"""``skillc mcp BUNDLE_OR_URL``: serve a bundle to agents over MCP (stdio, or streamable HTTP)."""

from __future__ import annotations

import ipaddress

import click

from ..errors import SkillcError
from ..index import reads_bundle


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("mcp")
@click.argument("bundle")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on with --http (a non-loopback one needs --public).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port for --http.")
@click.option("--public", is_flag=True, help="Allow --host to be an address other machines can reach.")
@click.option("--ttl", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds a served bundle's answers are cached before its manifest is checked again "
                   "(a local bundle is checked on every request).")
@reads_bundle
def mcp(bundle: str, http: bool, host: str, port: int, public: bool, ttl: float) -> None:
    """Serve BUNDLE (a bundle folder such as dist/, or its http(s) API URL) as an MCP server.

    \b
    Tools: browse_skills, load_skill, search_skills, recall_memory.
    Resources: skill://<skill path>/<file> for every published file; the skills extension
    io.modelcontextprotocol/skills (skills/list, skills/get, resources/directory/read).
    Prompt: skill_ref (a /collection/skill reference at the start of a message).

    \b
      claude mcp add skills -- skillc mcp /path/to/dist
      skillc mcp https://skills.example.com/api --http --port 8765
    """
    try:
        from ..mcp_server import BundleSource, build_server
    except ImportError as exc:  # (the SDK is the `mcp` extra)
        raise SkillcError(f"skillc mcp needs the MCP SDK ({exc.name} is not installed)",
                          hint="pip install 'skillc[mcp]'") from None
    if http and not _loopback(host) and not public:
        raise click.UsageError(f"--host {host} is reachable from other machines; add --public to mean it")
    source = BundleSource(bundle, ttl)
    source.check()  # a missing bundle is one line and exit 1, before any client connects
    server = build_server(source)
    if http:
        click.echo(f"skillc mcp: serving {bundle} at http://{host}:{port}/mcp", err=True)
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
