"""The real skills clients the tests drive (installed under .clients/ by tests/setup/reach.sh).

Each is run as its package's own bin script under Node 22 (what ``npx`` runs once the package is
installed), with a private HOME, telemetry off and no network but loopback.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / ".clients"
NODE22 = CLIENTS / "node22/node_modules/node/bin/node"
BINS = {
    "skills": CLIENTS / "skills/node_modules/.bin/skills",
    "openskills": CLIENTS / "openskills/node_modules/.bin/openskills",
    "claude": CLIENTS / "claude/node_modules/.bin/claude",
}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def client(name: str) -> Path:
    """The client's bin script, or a skip naming how to install it."""
    exe = BINS[name]
    if not NODE22.is_file() or not exe.exists():
        pytest.skip(f"{name} is not installed under .clients/ (run tests/setup/reach.sh; it needs the npm registry)")
    return exe


def run_client(name: str, *args: str, cwd: Path, home: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run a client; its output with terminal escapes removed."""
    exe = client(name)
    env = {
        "PATH": f"{NODE22.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "CI": "1",
        "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    home.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    r.stdout, r.stderr = _ANSI.sub("", r.stdout), _ANSI.sub("", r.stderr)
    return r


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (posix path -> bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
