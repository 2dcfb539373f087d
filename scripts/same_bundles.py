"""Do two commits build the same bundles?  ``python scripts/same_bundles.py REF_A REF_B``

Issue 18 reshapes the house without changing behaviour: a commit that only moves code must build
byte-identical bundles.  This checks out both refs as git worktrees in a temporary folder, builds
every corpus of ``../shared/corpora`` (or ``--corpora DIR``) with each (``PYTHONPATH=<worktree>/compiler
python -m skillc build``, ``SOURCE_DATE_EPOCH`` fixed, ``--keep-going`` since real corpora hold skills
that fail lint, the docs site included when mkdocs is importable), then compares the bundles byte for
byte and prints each differing, missing or extra file.  Exit status: 0 same, 1 different, 2 a build
failed with one ref and not the other (or the refs are unknown).

Both refs build into the same output path (one after the other, the first moved aside), with a
fresh cache, home and working folder each, so a difference is the code's, not where it ran.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EPOCH = "1700000000"


@dataclass(frozen=True)
class Built:
    """One corpus built with one ref: where the bundle is (None: the build failed) and its exit code."""

    corpus: str
    bundle: Path | None
    code: int
    stderr: str


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _worktree(ref: str, where: Path) -> Path:
    _git("worktree", "add", "--detach", "--quiet", str(where), ref)
    return where


def _build(tree: Path, corpus: Path, out: Path, scratch: Path, site: bool) -> tuple[int, str]:
    """``python -m skillc build`` of ``corpus`` into ``out`` with the code of ``tree``."""
    for sub in ("home", "cache", "cwd"):
        shutil.rmtree(scratch / sub, ignore_errors=True)
        (scratch / sub).mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch / "home"), "LANG": "C.UTF-8",
           "PYTHONPATH": str(tree / "compiler"), "SOURCE_DATE_EPOCH": EPOCH,
           "SKILLC_CACHE_DIR": str(scratch / "cache"), "TMPDIR": str(scratch / "cwd")}
    cmd = [sys.executable, "-m", "skillc", "build", str(corpus), "--out", str(out), "--keep-going", "--quiet"]
    if not site:
        cmd.append("--no-site")
    run = subprocess.run(cmd, cwd=scratch / "cwd", env=env, capture_output=True, text=True)
    return run.returncode, run.stderr.strip()


def build_all(tree: Path, corpora: list[Path], out: Path, keep: Path, scratch: Path, site: bool) -> list[Built]:
    """Each corpus built into ``out/<name>`` (the same path for every ref), then moved to ``keep``."""
    built = []
    keep.mkdir(parents=True)
    for corpus in corpora:
        target = out / corpus.name
        code, stderr = _build(tree, corpus, target, scratch, site)
        kept = None
        if code == 0 and target.is_dir():
            kept = keep / corpus.name
            os.rename(target, kept)
        shutil.rmtree(out, ignore_errors=True)  # (the build's work folder beside it)
        built.append(Built(corpus.name, kept, code, stderr))
        print(f"  {corpus.name}: exit {code}", file=sys.stderr)
    return built


def differences(a: Path, b: Path) -> list[str]:
    """Each file that differs between the two bundles (``~``), is only in ``a`` (``-``) or only in ``b`` (``+``)."""
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file() or p.is_symlink()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file() or p.is_symlink()}
    out = [f"- {p}" for p in sorted(files_a - files_b)] + [f"+ {p}" for p in sorted(files_b - files_a)]
    out += [f"~ {p}" for p in sorted(files_a & files_b) if not filecmp.cmp(a / p, b / p, shallow=False)]
    return sorted(out, key=lambda line: line[2:])


def compare(built_a: list[Built], built_b: list[Built]) -> int:
    status = 0
    for a, b in zip(built_a, built_b):
        if (a.bundle is None) != (b.bundle is None):
            print(f"{a.corpus}: built with one ref only (exit {a.code} / {b.code})\n  {a.stderr or b.stderr}")
            status = 2
        elif a.bundle is None or b.bundle is None:
            print(f"{a.corpus}: failed with both refs (exit {a.code} / {b.code})")
        else:
            diff = differences(a.bundle, b.bundle)
            print(f"{a.corpus}: {'identical' if not diff else f'{len(diff)} file(s) differ'}")
            for line in diff:
                print(f"  {line}")
            status = max(status, 1 if diff else 0)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref_a")
    parser.add_argument("ref_b")
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument("--only", action="append", default=[], help="a corpus name (repeatable)")
    parser.add_argument("--no-site", action="store_true", help="skip the docs site even if mkdocs is there")
    args = parser.parse_args(argv)
    try:
        refs = [_git("rev-parse", "--verify", f"{r}^{{commit}}") for r in (args.ref_a, args.ref_b)]
    except subprocess.CalledProcessError as exc:
        print(f"unknown ref: {exc.stderr.strip()}", file=sys.stderr)
        return 2
    corpora = sorted(p for p in args.corpora.iterdir() if p.is_dir() and (not args.only or p.name in args.only))
    site = not args.no_site and importlib.util.find_spec("mkdocs") is not None
    with tempfile.TemporaryDirectory(prefix="same-bundles-") as tmp_name:
        tmp = Path(tmp_name)
        trees: list[Path] = []
        try:
            results = []
            for label, ref in zip("ab", refs):
                trees.append(_worktree(ref, tmp / f"wt-{label}"))
                print(f"{label}: {ref[:10]} ({'with' if site else 'without'} the site)", file=sys.stderr)
                results.append(build_all(trees[-1], corpora, tmp / "out", tmp / label, tmp / "scratch", site))
        finally:
            for tree in trees:
                _git("worktree", "remove", "--force", str(tree))
        print(f"{args.ref_a} ({refs[0][:10]}) against {args.ref_b} ({refs[1][:10]}), "
              f"SOURCE_DATE_EPOCH={EPOCH}, site {'on' if site else 'off'}")
        return compare(*results)


if __name__ == "__main__":
    sys.exit(main())
