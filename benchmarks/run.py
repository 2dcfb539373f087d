"""Run every benchmark module (``benchmarks/bench_*.py``) and print its table.

Each module defines ``run(corpus: Path, workdir: Path) -> list[tuple[str, str]]`` returning rows of
(measurement, value) and measures its own baseline in the same run, so ratios are comparable across
machines. ``--only NAME`` runs one module; ``--skills N`` sets the synthetic corpus size.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import make_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    _byte_compile()
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if args.only:
        modules = [m for m in modules if any(o in m for o in args.only)]
    with tempfile.TemporaryDirectory(prefix="skillc-bench-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        t0 = time.perf_counter()
        make_corpus(corpus, args.skills, args.seed)
        print(f"synthetic corpus: {args.skills:,} skills, seed {args.seed}, generated in {time.perf_counter() - t0:.1f} s")
        for name in modules:
            mod = importlib.import_module(name)
            print(f"\n== {name} ==")
            sub = work / name
            sub.mkdir()
            rows = mod.run(corpus, sub)
            width = max((len(k) for k, _ in rows), default=0)
            for key, value in rows:
                print(f"  {key:<{width}}  {value}")


def _byte_compile() -> None:
    """Byte-compile skillc as ``pip install`` does, so a timed ``skillc`` command starts the way it
    does on a user's machine.  An editable install compiles nothing, and with
    ``PYTHONDONTWRITEBYTECODE`` set (as in some CI images) every command would compile the changed
    modules from source again: 40-50 ms a run, charged to the tool."""
    import skillc

    package = Path(skillc.__file__).resolve().parent
    compileall.compile_dir(str(package), quiet=1, rx=re.compile(r"[/\\]_data[/\\]"))


if __name__ == "__main__":
    main()
