"""Wall time of `skillc lint` and `skillc build --no-site` at two or more git refs, alternated.

The house issue (18) asks that reshaping the code makes nothing slower.  Timing two checkouts one
after the other on a shared machine mostly measures the machine; this script runs each command at
each ref in turn, round after round, and prints every ref's best time and its ratio to the first
ref's.  Each ref is checked out (``git worktree add --detach``) into a temporary folder and run as
``python -m skillc`` with that checkout's ``compiler/`` first on ``PYTHONPATH``; outputs go to the
temporary folder.

    python scripts/speed_across_refs.py 585ab32 11619ea --corpus ../shared/corpora/openclaw__skills
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def checkout(ref: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(PROJECT), "worktree", "add", "--detach", "-f", str(into), ref],
                   check=True, capture_output=True)
    return into


def timed(tree: Path, args: list[str], work: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree / "compiler"), "NO_COLOR": "1", "SOURCE_DATE_EPOCH": "1700000000"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "skillc", *args], cwd=work, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tree.name}: skillc {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-400:]}")
    return elapsed


def commands(corpus: Path, work: Path, label: str) -> dict[str, list[str]]:
    out = work / f"bundle-{label}"
    return {
        "lint": ["lint", str(corpus), "--format", "json", "--output", str(work / f"lint-{label}.json")],
        "build --no-site": ["build", str(corpus), "--out", str(out), "--no-site", "--no-cache", "--keep-going"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("refs", nargs="+", help="git refs; the first is the baseline")
    parser.add_argument("--corpus", type=Path, required=True, help="a skill repository to lint and build")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillc-refs-") as tmp:
        work = Path(tmp)
        trees = {ref: checkout(ref, work / f"tree-{i}") for i, ref in enumerate(args.refs)}
        best: dict[tuple[str, str], float] = {}
        try:
            for _ in range(args.rounds):
                for i, (ref, tree) in enumerate(trees.items()):
                    for name, cmd in commands(args.corpus.resolve(), work, str(i)).items():
                        t = timed(tree, cmd, work)
                        best[ref, name] = min(best.get((ref, name), t), t)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(PROJECT), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
                shutil.rmtree(tree, ignore_errors=True)
        print(f"corpus {args.corpus.name}, best of {args.rounds} (load {os.getloadavg()[0]:.1f})")
        base = args.refs[0]
        for name in ("lint", "build --no-site"):
            for ref in args.refs:
                print(f"  {name:<16} {ref:<12} {best[ref, name]:6.2f} s  {best[ref, name] / best[base, name]:.2f}x")


if __name__ == "__main__":
    main()
