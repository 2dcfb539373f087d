"""Shared test helpers: the corpora, the installed `skillc` command, skill-tree builders."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
# $SKILLC_TEST_CORPORA: another copy of the corpora (one with its symbolic links as git checks them out)
CORPORA = Path(os.environ.get("SKILLC_TEST_CORPORA") or PROJECT.parent / "shared" / "corpora")


# A server told to stop has this long to exit: a machine running the suite on every core (and
# builds beside it) twice took a stopped `skillc serve` over 10 s to exit (SIGTERM once, SIGINT once).
STOP_SECONDS = 60


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    """Send ``sig`` to ``proc`` (SIGTERM; SIGINT for Ctrl-C) and wait for it; returns its exit
    status.  One that does not exit within ``STOP_SECONDS`` is killed and fails the test with its
    last output (a server that ignores the signal is a bug)."""
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        tail = err[-2000:] if err else ""
        pytest.fail(f"{proc.args[:3]} did not exit within {STOP_SECONDS} s of signal {sig}; stderr: {tail!r}")


def skillc_command() -> list[str]:
    """The installed console script (tests run it as a user would), else `python -m skillc`."""
    exe = shutil.which("skillc", path=str(Path(sys.executable).parent)) or shutil.which("skillc")
    return [exe] if exe else [sys.executable, "-m", "skillc"]


def run_skillc(*args: str, cwd: Path | None = None, env: dict | None = None, input: str | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([*skillc_command(), *args], cwd=cwd, env=full_env, input=input, capture_output=True,
                          text=True, timeout=timeout)


def write_skill(root: Path, rel: str, frontmatter: str | None = None, body: str = "# Title\n\nDo the thing.\n",
                name: str | None = None, description: str = "Does the thing. Use when the user asks for the thing.",
                file_name: str = "SKILL.md") -> Path:
    """Create ``root/rel/SKILL.md``; the default frontmatter is valid for the directory name."""
    d = root / rel
    d.mkdir(parents=True, exist_ok=True)
    if frontmatter is None:
        frontmatter = f"name: {name or rel.rsplit('/', 1)[-1]}\ndescription: {description}\n"
    (d / file_name).write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return d / file_name


@pytest.fixture
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.skip("../shared/corpora is not beside the project")
    return CORPORA


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root
