"""`skillc lint` against its floor and against skills-ref, on the seeded synthetic corpus.

* floor: read every SKILL.md, SHA-256 it, and parse its frontmatter with PyYAML's CSafeLoader (the
  least any linter that reads YAML must do; research/perf.md §5). Target: lint ≤ 2x the floor.
* lint: ``lint_root`` in-process with the default (recommended) profile, every rule on, and the
  installed ``skillc lint`` command (one process, JSON to a file).
* skills-ref: the reference library's ``validate()`` on the first 2,000 skills, in-process (its best
  case). Target: lint ≥ 20x faster per skill.

Each timing is the best of a few runs (warm page cache), measured in this run on this machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from skillc.lint import LintConfig, lint_root

FENCE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)
REPEAT = 3


def _files(corpus: Path) -> list[Path]:
    return sorted(corpus.rglob("SKILL.md"))


def floor(files: list[Path]) -> int:
    n = 0
    for f in files:
        raw = f.read_bytes()
        hashlib.sha256(raw).hexdigest()
        fences = [m.start() for m in FENCE.finditer(raw, 0, 1 << 16)][:2]
        if len(fences) == 2 and fences[0] == 0:
            text = raw[fences[0] + 4 : fences[1]].decode("utf-8")
            yaml.load(text, Loader=yaml.CSafeLoader)
            n += 1
    return n


def _best(fn, repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _skillc() -> list[str]:
    exe = shutil.which("skillc", path=str(Path(sys.executable).parent)) or shutil.which("skillc")
    return [exe] if exe else [sys.executable, "-m", "skillc"]


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    files = _files(corpus)
    n = len(files)
    rows: list[tuple[str, str]] = [("skills", f"{n:,}")]
    parsed = floor(files)  # also warms the page cache
    t_floor = _best(lambda: floor(files))
    rows.append(("floor: read + sha256 + CSafeLoader", f"{t_floor:.2f} s ({t_floor / n * 1e6:.0f} µs/skill, {parsed:,} parsed)"))

    config = LintConfig()
    result = lint_root(corpus, config)
    t_lint = _best(lambda: lint_root(corpus, config))
    rows.append(("skillc lint_root (recommended, all rules)", f"{t_lint:.2f} s ({t_lint / n * 1e6:.0f} µs/skill, "
                                                               f"{len(result.diagnostics):,} diagnostics)"))
    rows.append(("lint / floor", f"{t_lint / t_floor:.2f}x (target ≤ 2x)"))
    # Like for like with skills-ref and the floor: the discovery, parse and specification rules only.
    spec_only = LintConfig(select=("D1", "P2", "S3"))
    t_spec = _best(lambda: lint_root(corpus, spec_only))
    rows.append(("skillc lint_root --select D1,P2,S3", f"{t_spec:.2f} s ({t_spec / n * 1e6:.0f} µs/skill)"))
    rows.append(("lint (D1,P2,S3) / floor", f"{t_spec / t_floor:.2f}x"))

    out = workdir / "lint.json"
    cmd = [*_skillc(), "lint", str(corpus), "--format", "json", "--output", str(out)]

    def cli() -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        if proc.returncode not in (0, 1):
            raise RuntimeError(proc.stderr)

    t_cli = _best(cli, 2)
    rows.append(("skillc lint CLI (one process, JSON)", f"{t_cli:.2f} s ({t_cli / n * 1e6:.0f} µs/skill)"))
    rows.append(("CLI / floor", f"{t_cli / t_floor:.2f}x"))

    try:
        from skills_ref import validate
    except ImportError:
        rows.append(("skills-ref", "not installed (pip install skills-ref; nox -s bench does)"))
        return rows
    sample = [f.parent for f in files[:2000]]
    t0 = time.perf_counter()
    invalid = sum(1 for d in sample if validate(d))
    t_ref = time.perf_counter() - t0
    per_ref = t_ref / len(sample)
    per_lint = t_lint / n
    rows.append((f"skills-ref validate() x {len(sample):,}", f"{t_ref:.2f} s ({per_ref * 1e6:.0f} µs/skill, "
                                                              f"{invalid:,} invalid)"))
    rows.append(("lint speed-up over skills-ref (per skill)", f"{per_ref / per_lint:.1f}x (target ≥ 20x)"))
    rows.append(("lint (D1,P2,S3) speed-up over skills-ref", f"{per_ref / (t_spec / n):.1f}x"))
    return rows


if __name__ == "__main__":  # a quick standalone run: python benchmarks/bench_lint.py [N]
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from synthetic import make_corpus

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        make_corpus(corpus, int(sys.argv[1]) if len(sys.argv) > 1 else 2000, 20261122)
        for key, value in run(corpus, Path(tmp)):
            print(f"  {key:<45} {value}")
