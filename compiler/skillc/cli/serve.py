"""``skillc serve``."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("serve")
@click.argument("directory", default="dist", type=click.Path(file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default; 0.0.0.0 exposes the bundle to the network).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0 picks a free one).")
@click.option("--quiet", "-q", is_flag=True, help="Do not log requests.")
def serve(directory: Path, host: str, port: int, quiet: bool) -> None:
    """Serve a bundle built by `skillc build` (default ./dist) over HTTP.

    The docs site is at /, the Meerkat Skills API at /api (GET /api/skills,
    /api/skills/{quote(id, safe='')}, /api/skill-collections: point an agent's base_url at
    http://HOST:PORT/api) and the discovery index at /.well-known/agent-skills/index.json.
    Responses carry ETags from the manifest (304 on If-None-Match), are gzip-compressed when
    asked, and never reach outside the bundle. A rebuild is picked up without a restart.
    Stop with Ctrl-C.
    """
    import signal

    from ..bundle.serve import make_server, url_of

    def stop(signum, frame):  # SIGTERM exits as cleanly as Ctrl-C
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background by a shell
        signal.signal(signal.SIGINT, stop)
    server = make_server(directory, host, port, quiet)
    url = url_of(server)
    click.echo(f"Serving {directory} at {url} (API: {url}api) - press Ctrl-C to stop", err=False)
    if not _loopback(server.server_address[0]):
        # (said once, on stderr: 0.0.0.0 is easy to type for "localhost" and serves every network)
        click.echo(f"warning: listening on {host}, not loopback: anyone who can reach this machine can read "
                   "the bundle (the default --host 127.0.0.1 keeps it local)", err=True)
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    click.echo("Stopped.", err=True)


def _loopback(address: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False
