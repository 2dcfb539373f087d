"""`skillc lint` with every rule on against agnix 0.59.3 (the Rust lint peer, issue 22), and against
the floor, on the seeded synthetic corpus and on a real repository.

* agnix: the command as a user runs it (``agnix --format json --max-files N PATH``: every rule of
  its default ``generic`` target, the file limit raised above the corpus's file count), from
  ``.clients/agnix`` (``tests/setup/lint.sh`` installs it; ``nox -s bench`` runs that script).
* skillc: ``skillc lint --extend-select <every rule naming an agnix rule that is in no profile>
  --format json``: the default profile with F416, F417, F418 and B712 turned on, the G1xx
  manifest stage included; the command as run (start-up, the default worker processes).
  Target: ≤ 0.5x agnix's wall time.  ``--select ALL`` (every rule skillc has, B708 too) is
  printed beside it.
* floor: ``bench_lint.floor`` (walk, read, SHA-256, CSafeLoader) in one process; target for the
  command with every rule on: ≤ 2x the floor, as for the default profile (``bench_lint``).

Wall times are best of three with a warm page cache; the ratios compare runs of this process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from bench_lint import REAL_DEFAULT, _skillc, _walk, floor

from skillc.validate.rules.loader import by_code_order

PROJECT = Path(__file__).resolve().parents[1]
AGNIX = PROJECT / ".clients" / "agnix" / "bin" / "agnix"
REPEAT = 3


def _agnix() -> str | None:
    if AGNIX.is_file():
        return str(AGNIX)
    return shutil.which("agnix")


def _wall(cmd: list[str], cwd: Path | None = None, repeat: int = REPEAT) -> tuple[float, str]:
    """Best wall time of ``cmd`` (its exit status may be 1: findings), and its last output."""
    env = {**os.environ, "NO_COLOR": "1"}
    best, out = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - t0)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-500:]}")
        out = proc.stdout
    return best, out


def _files(root: Path) -> int:
    return sum(len(names) for _, _, names in os.walk(root))


def compare(root: Path, workdir: Path, label: str, agnix: str) -> list[tuple[str, str]]:
    n = len(_walk(root))
    max_files = _files(root) + 1
    floor(root)  # warms the page cache
    t_floor = min(_timed(lambda: floor(root)) for _ in range(REPEAT))
    t_agnix, agnix_out = _wall([agnix, "--format", "json", "--max-files", str(max_files), str(root)])
    found_agnix = len(json.loads(agnix_out)["diagnostics"]) if agnix_out.strip() else 0
    # (the default profile, and the agnix-mapped rules that are in no profile: F416-F418, B712)
    extra = ",".join(r.code for r in by_code_order() if r.agnix and not r.profiles)
    t_skillc, found_skillc = _skillc_wall(root, workdir / f"{label}-agnix-rules.json", "--extend-select", extra)
    t_all, found_all = _skillc_wall(root, workdir / f"{label}-all.json", "--select", "ALL")
    return [
        (f"{label}: skills (files)", f"{n:,} ({max_files - 1:,})"),
        ("floor: walk + read + sha256 + CSafeLoader, 1 process", f"{t_floor:.2f} s"),
        ("agnix 0.59.3 --format json (every rule)", f"{t_agnix:.2f} s ({found_agnix:,} findings)"),
        (f"skillc lint --extend-select {extra}", f"{t_skillc:.2f} s ({found_skillc:,} findings)"),
        ("  skillc / agnix, wall time", f"{t_skillc / t_agnix:.2f}x (target ≤ 0.5x)"),
        ("  skillc / floor", f"{t_skillc / t_floor:.2f}x (target ≤ 2x)"),
        ("skillc lint --select ALL (every rule skillc has)", f"{t_all:.2f} s ({found_all:,} findings, "
                                                            f"{t_all / t_agnix:.2f}x agnix, {t_all / t_floor:.2f}x the floor)"),
    ]


def _skillc_wall(root: Path, report: Path, *selection: str) -> tuple[float, int]:
    t, _ = _wall([*_skillc(), "lint", str(root), *selection, "--format", "json", "--output", str(report)])
    return t, len(json.loads(report.read_text("utf-8"))["diagnostics"])


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    agnix = _agnix()
    if agnix is None:
        return [("agnix", "not installed (bash tests/setup/lint.sh; nox -s bench runs it)")]
    rows = compare(corpus, workdir, "synthetic", agnix)
    real = Path(os.environ.get("SKILLC_BENCH_REAL", str(REAL_DEFAULT)))
    if real.is_dir():
        rows.append(("", ""))
        rows.extend(compare(real, workdir, real.name, agnix))
    return rows
