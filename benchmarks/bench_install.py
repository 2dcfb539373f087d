"""Installing 1,000 skills with the real `npx skills` (issue 19): time and bytes.

A synthetic 1,000-skill corpus (``synthetic.make_corpus``, whatever ``--skills`` says) is built and
served by ``skillc serve`` on loopback, then installed whole by Vercel's skills CLI
(``skills add URL --skill '*' --agent claude-code -y --copy``) from:

* the agentskills.io discovery index (one zip per skill, digest-checked): what skillc publishes for it;
* the legacy ``/.well-known/skills/`` layout (one request per file, no digest), for comparison;
* the baseline, measured in the same run: the same client installing the same skills from a local
  folder (``skillc export --target skills-folder``), no HTTP at all.

Bytes: what the client downloads (the index plus every archive, or every listed file) and what it
writes.  Needs the clients of ``tests/setup/reach.sh``::

    .venv/bin/python benchmarks/run.py --only install --skills 1000
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CLIENTS = ROOT / ".clients"
NODE22 = CLIENTS / "node22/node_modules/node/bin/node"
SKILLS = CLIENTS / "skills/node_modules/.bin/skills"
COUNT = 1000


def _skillc() -> list[str]:
    exe = shutil.which("skillc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "skillc"]


def _run(args: list[str], cwd: Path, env: dict | None = None) -> None:
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed: {(r.stderr or r.stdout).strip()[-500:]}")


def _install(source: str, work: Path) -> tuple[float, int, int]:
    """Seconds, skills installed and bytes written by one `skills add SOURCE`."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    env = {"PATH": f"{NODE22.parent}:{os.environ.get('PATH', '')}", "HOME": str(work), "DISABLE_TELEMETRY": "1",
           "CI": "1", "NO_COLOR": "1"}
    t0 = time.perf_counter()
    _run([str(SKILLS), "add", source, "--skill", "*", "--agent", "claude-code", "-y", "--copy"], work, env)
    seconds = time.perf_counter() - t0
    installed = work / ".claude/skills"
    skills = sum(1 for _ in installed.iterdir()) if installed.is_dir() else 0
    written = sum(p.stat().st_size for p in installed.rglob("*") if p.is_file()) if installed.is_dir() else 0
    return seconds, skills, written


def _downloaded(bundle: Path) -> tuple[int, int]:
    """Bytes a client fetches through the discovery index (index + archives) and the legacy layout."""
    index = bundle / ".well-known/agent-skills/index.json"
    archives = sum(p.stat().st_size for p in (bundle / "api/discovery").rglob("*.zip"))
    legacy_dir = bundle / ".well-known/skills"
    legacy = sum(p.stat().st_size for p in legacy_dir.rglob("*") if p.is_file())
    return index.stat().st_size + archives, legacy


def _serve(bundle: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*_skillc(), "serve", str(bundle), "--port", "0", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = proc.stdout.readline() if proc.stdout else ""
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        proc.kill()
        raise SystemExit(f"skillc serve did not start: {line}")
    return proc, f"http://127.0.0.1:{m.group(1)}"


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    from synthetic import make_corpus

    if not (NODE22.is_file() and SKILLS.exists()):
        return [("skipped", "the skills CLI is not installed (run tests/setup/reach.sh)")]
    src = workdir / "corpus"
    make_corpus(src, COUNT, 20261129)
    env = {**os.environ, "SKILLC_CACHE_DIR": str(workdir / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    _run([*_skillc(), "build", str(src), "--out", str(workdir / "out"), "--keep-going", "--quiet", "--no-site"],
         workdir, env)
    bundle = workdir / "out"
    published = len(json.loads((bundle / "api/skills.json").read_text())["skills"])
    _run([*_skillc(), "export", str(bundle), "--target", "skills-folder", "-o", str(workdir / "folder")], workdir, env)
    base_s, base_n, base_w = _install(str(workdir / "folder"), workdir / "p-folder")
    proc, url = _serve(bundle)
    try:
        wk_s, wk_n, wk_w = _install(url, workdir / "p-wk")
        legacy_bundle = workdir / "legacy"
        shutil.copytree(bundle, legacy_bundle, symlinks=True)
        (legacy_bundle / ".well-known/agent-skills/index.json").unlink()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    proc, url = _serve(legacy_bundle)
    try:
        lg_s, lg_n, lg_w = _install(url, workdir / "p-legacy")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    wk_bytes, legacy_bytes = _downloaded(bundle)
    return [
        ("skills published / installed (index, legacy, folder)", f"{published:,} / {wk_n:,}, {lg_n:,}, {base_n:,}"),
        ("install from the discovery index (zips)", f"{wk_s:.1f} s, {wk_bytes / 1e6:.2f} MB downloaded, "
                                                    f"{wk_w / 1e6:.2f} MB written"),
        ("install from the legacy layout (per file)", f"{lg_s:.1f} s, {legacy_bytes / 1e6:.2f} MB downloaded"),
        ("baseline: install from a local folder", f"{base_s:.1f} s, {base_w / 1e6:.2f} MB written"),
        ("index / baseline", f"{wk_s / base_s:.2f}x"),
        ("legacy / baseline", f"{lg_s / base_s:.2f}x"),
        ("per skill, from the index", f"{1000 * wk_s / max(wk_n, 1):.1f} ms, {wk_bytes / max(wk_n, 1):,.0f} B"),
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skillc-bench-install-") as tmp:
        for key, value in run(Path(tmp), Path(tmp)):
            print(f"  {key:<55}  {value}")
