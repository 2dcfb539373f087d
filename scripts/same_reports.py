"""Does the working tree lint like a commit?  ``python scripts/same_reports.py [REF] [--keep DIR]``

A speed change to ``skillc lint`` must not change any report.  This extracts ``REF`` (default: the
merge base with ``main``) with ``git archive`` into a temporary folder, then lints every corpus of
``../shared/corpora``, the project's ``skills/`` and each ``--extra`` folder (the synthetic corpus) with
both codes (``PYTHONPATH=<tree>/compiler python -m skillc lint CORPUS --select ALL --format json``,
plus the default text report), and compares the reports byte for byte.  ``--keep DIR`` stores
``REF``'s reports there and reuses them on the next run (they depend on ``REF`` and the corpora only).
Exit status: 0 same, 1 different.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
FORMATS = (("json", ("--select", "ALL", "--format", "json")), ("text", ()))


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def _extract(ref: str, where: Path) -> Path:
    archive = where / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, stdout=out)
    with tarfile.open(archive) as tar:
        tar.extractall(where / "tree", filter="data")
    return where / "tree"


def _lint(tree: Path, corpus: Path, args: tuple[str, ...], report: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(tree / "compiler"), "NO_COLOR": "1", "LANG": "C.UTF-8"}
    cmd = [sys.executable, "-m", "skillc", "lint", str(corpus), *args, "--output", str(report)]
    return subprocess.run(cmd, env=env, capture_output=True, check=False).returncode


def _corpora(extra: list[str]) -> list[Path]:
    found = sorted(p for p in CORPORA.iterdir() if p.is_dir()) if CORPORA.is_dir() else []
    return [*found, ROOT / "skills", *(Path(e) for e in extra)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default=None)
    parser.add_argument("--keep", type=Path, default=None, help="folder for REF's reports (reused)")
    parser.add_argument("--extra", action="append", default=[], help="another corpus folder")
    options = parser.parse_args(argv)
    ref = _git("rev-parse", options.ref or _git("merge-base", "HEAD", "main"))
    differ = 0
    with tempfile.TemporaryDirectory(prefix="same-reports-") as scratch:
        keep = options.keep / ref[:12] if options.keep else Path(scratch) / "base"
        keep.mkdir(parents=True, exist_ok=True)
        base_tree: Path | None = None
        for corpus in _corpora(options.extra):
            for fmt, args in FORMATS:
                name = f"{corpus.name}.{fmt}"
                base, mine = keep / name, Path(scratch) / name
                if not base.exists():
                    base_tree = base_tree or _extract(ref, Path(scratch))
                    (keep / f"{name}.exit").write_text(str(_lint(base_tree, corpus, args, base)))
                code = _lint(ROOT, corpus, args, mine)
                same = base.read_bytes() == mine.read_bytes() and str(code) == (keep / f"{name}.exit").read_text()
                differ += not same
                print(f"{'same' if same else 'DIFFERENT'}  {name} (exit {code})", flush=True)
    print(f"{differ} report(s) differ from {ref[:12]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
