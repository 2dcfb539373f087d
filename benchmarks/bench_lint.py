"""`skillc lint` against its floor and against skills-ref, on the seeded synthetic corpus.

Best of a few runs with a warm page cache, everything measured in this run on this machine.

* floor: find the SKILL.md files (one ``os.scandir`` walk), read each, SHA-256 it, cut the
  frontmatter at its first two ``---`` lines and parse it with PyYAML's CSafeLoader, in one
  process: the least any linter that reads YAML must do (research/perf.md §5).
* lint: the installed ``skillc lint`` command as a user runs it (start-up, the default worker
  processes, a JSON report): target ≤ 2x the floor.  Beside it, like for like on one core:
  the command with ``SKILLC_JOBS=1`` and ``lint_root`` in-process (every rule of the default
  recommended profile), its stages one by one, and the spec-only selection.
* skills-ref: the reference library's ``validate()`` on the first 2,000 skills in-process (its best
  case: one process, no start-up), against ``lint_root`` in-process on exactly those 2,000, in one
  process and on every core, as the command calls it (``documents=False``: workers send back only
  what the report needs): every rule of the default profile, ``--profile spec`` (the
  specification's rules: what skills-ref checks, and more) and ``--select D1,P2,S3``.  Target: lint
  ≥ 20x faster per skill.  The floor bounds any one-process
  speed-up: a linter that must read and parse what the floor does cannot be more than
  skills-ref / floor times faster, so that bound is printed next to the target.
* The corpus (``synthetic.py``) is spec-valid, as most real skills that a team lints in CI are, so
  skills-ref runs its whole validation on every skill instead of stopping at the first error.
* With ``SKILLC_BENCH_REAL`` (default: ``../shared/corpora/openclaw__skills`` beside the project,
  when present) the same comparison runs on a real repository, whose skills hold many more files.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from skillc.discover.walk import discover
from skillc.validate.lint import (
    LintConfig,
    active_rules,
    check_collection,
    check_document,
    finalize,
    lint_root,
    read_item,
)
from skillc.validate.rules.registry import RuleContext

FENCE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)
REPEAT = 3
REF_SAMPLE = 2000
REAL_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "openclaw__skills"


def _walk(root: Path) -> list[str]:
    """Every SKILL.md under root: the cheapest walk (no symlinks followed, nothing else looked at)."""
    out: list[str] = []
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name == "SKILL.md":
                    out.append(e.path)
    return out


def _floor_files(files: list[str]) -> int:
    n = 0
    for f in files:
        with open(f, "rb") as fh:
            raw = fh.read()
        hashlib.sha256(raw).hexdigest()
        fences = FENCE.finditer(raw, 0, 1 << 16)
        first, second = next(fences, None), next(fences, None)  # stop at the closing fence
        if first is not None and second is not None and first.start() == 0:
            try:
                yaml.load(raw[first.end() + 1 : second.start()].decode("utf-8"), Loader=yaml.CSafeLoader)
            except (yaml.YAMLError, UnicodeDecodeError, ValueError):
                continue
            n += 1
    return n


def floor(root: Path) -> int:
    return _floor_files(_walk(root))


def _best(fn: Callable[[], object], repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@contextlib.contextmanager
def _jobs(value: str | None) -> Iterator[None]:
    old = os.environ.get("SKILLC_JOBS")
    if value is None:
        os.environ.pop("SKILLC_JOBS", None)
    else:
        os.environ["SKILLC_JOBS"] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SKILLC_JOBS", None)
        else:
            os.environ["SKILLC_JOBS"] = old


def _skillc() -> list[str]:
    exe = shutil.which("skillc", path=str(Path(sys.executable).parent)) or shutil.which("skillc")
    return [exe] if exe else [sys.executable, "-m", "skillc"]


def _us(seconds: float, n: int) -> str:
    return f"{seconds / n * 1e6:.0f} µs/skill"


def stages(root: Path, config: LintConfig, n: int, t_floor: float) -> list[tuple[str, str]]:
    """Where the serial time goes: each stage of lint_root timed on its own (with the cyclic GC
    paused, as lint_root pauses it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _stages(root, config, n, t_floor)
    finally:
        if was_enabled:
            gc.enable()


def _stages(root: Path, config: LintConfig, n: int, t_floor: float) -> list[tuple[str, str]]:
    rules = active_rules(config)
    t_disc = _best(lambda: discover(root, config.discovery))
    disc = discover(root, config.discovery)
    t_read = _best(lambda: [read_item(disc.root, it) for it in disc.items])
    docs = [read_item(disc.root, it) for it in disc.items]
    ctxs = [RuleContext(it, d, Path(disc.root), config.settings, config.profile) for it, d in zip(disc.items, docs)]
    t_rules = _best(lambda: [check_document(c, rules) for c in ctxs])
    no_secrets = [r for r in rules if r.code != "B707"]
    t_rules_ns = _best(lambda: [check_document(c, no_secrets) for c in ctxs])
    t_coll = _best(lambda: finalize(check_collection(ctxs, rules), config))
    return [
        ("  stage: discover", _us(t_disc, n)),
        ("  stage: read + parse", _us(t_read, n)),
        ("  stage: document rules", f"{_us(t_rules, n)} (of which B707 secret scan {_us(t_rules - t_rules_ns, n)})"),
        ("  stage: collection rules + finalize", _us(t_coll, n)),
        ("  budget for all rules at 2x the floor", (f"2 x floor - discover - read/parse = "
                                                  f"{_us(2 * t_floor - t_disc - t_read, n)} (spent: "
                                                  f"{_us(t_rules + t_coll, n)})")),
    ]


def compare(root: Path, workdir: Path, label: str) -> list[tuple[str, str]]:
    n = len(_walk(root))
    rows: list[tuple[str, str]] = [(f"{label}: skills", f"{n:,}")]
    parsed = floor(root)  # also warms the page cache
    t_floor = _best(lambda: floor(root))
    files = _walk(root)
    t_walk = _best(lambda: _walk(root))
    rows.append(("floor: walk + read + sha256 + CSafeLoader", (f"{t_floor:.2f} s ({_us(t_floor, n)}; walk "
                                                              f"{_us(t_walk, n)}; {parsed:,} frontmatters parsed)")))
    config = LintConfig()
    with _jobs("1"):
        # (only the count is kept: a result held while later rows fork workers would make every fork
        # copy its page tables, a cost no real run has)
        found = len(lint_root(root, config).diagnostics)
        t_lint = _best(lambda: lint_root(root, config))
        rows.append(("lint_root, 1 process (recommended, all rules)",
                     f"{t_lint:.2f} s ({_us(t_lint, n)}, {found:,} diagnostics)"))
        rows.append(("lint_root / floor, one core each (like for like)", f"{t_lint / t_floor:.2f}x"))
        rows.extend(stages(root, config, n, t_floor))
        spec_only = LintConfig(select=("D1", "P2", "S3"))
        t_spec = _best(lambda: lint_root(root, spec_only))
        rows.append(("lint_root --select D1,P2,S3 (the floor's work + spec rules)",
                     f"{t_spec:.2f} s ({_us(t_spec, n)}, {t_spec / t_floor:.2f}x the floor)"))
    out = workdir / f"{label}-lint.json"
    cmd = [*_skillc(), "lint", str(root), "--format", "json", "--output", str(out)]

    def cli(jobs: str | None) -> Callable[[], None]:
        def run() -> None:
            env = {k: v for k, v in os.environ.items() if k != "SKILLC_JOBS"}
            env["NO_COLOR"] = "1"
            if jobs is not None:
                env["SKILLC_JOBS"] = jobs
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            if proc.returncode not in (0, 1):
                raise RuntimeError(proc.stderr)
        return run

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    t_cli_par = _best(cli(None), 3)
    rows.append((f"skillc lint (the command as run: start-up, {cores} cores, JSON report)",
                 f"{t_cli_par:.2f} s ({_us(t_cli_par, n)}) = {t_cli_par / t_floor:.2f}x the floor (target ≤ 2x)"))
    t_cli = _best(cli("1"), 2)
    rows.append(("  the same with SKILLC_JOBS=1 (one process)", (f"{t_cli:.2f} s ({_us(t_cli, n)}, "
                                                                 f"{t_cli / t_floor:.2f}x the floor)")))
    with _jobs(None):
        t_par = _best(lambda: lint_root(root, config, documents=False))
    rows.append((f"  lint_root in-process, {cores} cores", f"{t_par:.2f} s ({t_par / t_floor:.2f}x the floor)"))
    rows.extend(_against_skills_ref(root, files, config, label))
    return rows


def _against_skills_ref(root: Path, files: list[str], config: LintConfig, label: str) -> list[tuple[str, str]]:
    try:
        from skills_ref import validate
    except ImportError:
        return [("skills-ref", "not installed (pip install skills-ref; nox -s bench does)")]
    sample = sorted(files)[:REF_SAMPLE]
    dirs = [Path(f).parent for f in sample]
    only = frozenset(Path(f).parent.relative_to(root).as_posix() for f in sample)
    m = len(sample)
    crashed = 0

    def check(d: Path) -> bool:
        nonlocal crashed
        try:
            return bool(validate(d))
        except Exception:  # noqa: BLE001 - skills-ref raises on some real files (e.g. C1 control characters)
            crashed += 1
            return True

    check(dirs[0])  # imports
    t0 = time.perf_counter()
    invalid = sum(1 for d in dirs if check(d))
    t_ref = time.perf_counter() - t0
    t_floor = _best(lambda: _floor_files(sample))  # the same files (no walk: they are given)
    spec_only = LintConfig(select=("D1", "P2", "S3"))
    spec_profile = LintConfig(profile="spec")

    def timed(cfg: LintConfig) -> float:
        return _best(lambda: lint_root(root, cfg, only=only, documents=False))

    with _jobs("1"):
        lint_root(root, config, only=only)
        t_lint, t_spec, t_profile = timed(config), timed(spec_only), timed(spec_profile)
    with _jobs(None):
        t_par, t_spec_par, t_profile_par = timed(config), timed(spec_only), timed(spec_profile)
    per_ref, per_lint, per_floor = t_ref / m, t_lint / m, t_floor / m
    return [
        (f"skills-ref validate() x {m:,} ({label})", f"{t_ref:.2f} s ({per_ref * 1e6:.0f} µs/skill, {invalid:,} invalid"
                                                             + (f", {crashed} raised" if crashed else "") + ")"),
        (f"lint_root on the same {m:,}, 1 process", f"{t_lint:.2f} s ({per_lint * 1e6:.0f} µs/skill)"),
        ("lint speed-up over skills-ref, all rules", (f"{per_ref / per_lint:.1f}x in one process, "
                                                     f"{t_ref / t_par:.1f}x on every core (target ≥ 20x)")),
        ("  --profile spec (the specification's rules) speed-up", (f"{per_ref / (t_profile / m):.1f}x in one process "
                                                               f"({t_profile / m * 1e6:.0f} µs/skill), "
                                                               f"{t_ref / t_profile_par:.1f}x on every core")),
        ("  --select D1,P2,S3 (what skills-ref checks) speed-up", (f"{per_ref / (t_spec / m):.1f}x in one process "
                                                                 f"({t_spec / m * 1e6:.0f} µs/skill), "
                                                                 f"{t_ref / t_spec_par:.1f}x on every core")),
        ("  bound: skills-ref / floor on the same files", (f"{per_ref / per_floor:.1f}x (floor {per_floor * 1e6:.0f} "
                                                          f"µs/skill; ≥ 20x needs skills-ref ≥ 20x the floor)")),
    ]


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    rows = compare(corpus, workdir, "synthetic")
    real = Path(os.environ.get("SKILLC_BENCH_REAL", str(REAL_DEFAULT)))
    if real.is_dir():
        rows.append(("", ""))
        rows.extend(compare(real, workdir, real.name))
    return rows


if __name__ == "__main__":  # a quick standalone run: python benchmarks/bench_lint.py [N]
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from synthetic import make_corpus

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        make_corpus(corpus, int(sys.argv[1]) if len(sys.argv) > 1 else 2000, 20261122)
        for key, value in run(corpus, Path(tmp)):
            print(f"  {key:<55} {value}")
