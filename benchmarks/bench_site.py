"""Docs site (mkdocs + material, ``skillc.emit.docsite``): what it adds to ``skillc build``.

Default (part of ``benchmarks/run.py``): the pure stages only, which take seconds — building the
page model and the Markdown of every page, and, as the baseline, the render floor (issue 21):
Python-Markdown rendering those same pages with the site's extensions plus a minimal Jinja2 page
around each (no theme, no mkdocs); and what a reader downloads: page sizes, and the bytes the
first and a second search query fetch (gzip, as the servers send them).

``--site`` (or ``SKILLC_BENCH_SITE=1``) adds the full measurement, which takes minutes at 10,000
skills: ``skillc build`` with the site vs ``skillc build --no-site`` on the same warm cache, the
ratio of the site's cost to the render floor, and a rebuild after one changed skill (incremental:
only the pages that show it are rendered again)::

    .venv/bin/python benchmarks/bench_site.py --site --skills 10000
    SKILLC_BENCH_SITE=1 .venv/bin/python benchmarks/run.py --only site --skills 10000
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

HERE = Path(__file__).resolve().parent


def _skillc() -> list[str]:
    exe = shutil.which("skillc", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "skillc"]


def _build(corpus: Path, out: Path, cache: Path, *extra: str) -> float:
    """Seconds of one ``skillc build``, started after ``sync``: the writeback the build before left
    pending (a clean site build writes ≈ 60 MB and 6,000 files and folders at 1,000 skills, which
    the file system commits in the next seconds) is not charged to the build timed next."""
    env = {**os.environ, "SKILLC_CACHE_DIR": str(cache), "SOURCE_DATE_EPOCH": "1700000000"}
    os.sync()
    t0 = time.perf_counter()
    r = subprocess.run([*_skillc(), "build", str(corpus), "--out", str(out), "--keep-going", "--quiet", "--force",
                        *extra], env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"skillc build failed: {r.stderr.strip()}")
    return time.perf_counter() - t0


def _size(root: Path, skip: tuple[str, ...] = ("api", ".well-known", "_routing")) -> tuple[int, int]:
    files = total = 0
    for entry in root.iterdir():
        if entry.name in skip:
            continue
        for p in ([entry] if entry.is_file() else entry.rglob("*")):
            if p.is_file():
                files += 1
                total += p.stat().st_size
    return files, total


def run(corpus: Path, workdir: Path, full: bool | None = None) -> list[tuple[str, str]]:
    from skillc.build.pipeline import BuildOptions, run_build
    from skillc.emit.docsite.model import site_model
    from skillc.emit.docsite.pages import project_files
    from skillc.resolve_types import EmitContext, EmitOptions

    full = os.environ.get("SKILLC_BENCH_SITE") == "1" if full is None else full
    rows: list[tuple[str, str]] = []
    cache = workdir / "cache"
    bundle = workdir / "bundle"
    result = run_build(BuildOptions(paths=(str(corpus),), out=str(bundle), site=False, keep_going=True,
                                    cache_dir=cache, env={"SOURCE_DATE_EPOCH": "1700000000"}))
    n = len(result.resolution.skills)
    ctx = EmitContext(result.resolution, bundle, 1700000000.0, options=EmitOptions(cwd=str(corpus.parent)))
    t0 = time.perf_counter()
    files = project_files(site_model(ctx))
    t_gen = time.perf_counter() - t0
    docs = [text for path, text in files.items() if path.endswith(".md")]
    t_floor = _render_floor(docs)
    rows += [("skills", f"{n:,}"), ("pages generated", f"{len(docs):,}"),
             ("model + page Markdown (skillc.emit.docsite)", f"{t_gen:.2f} s"),
             ("baseline: Python-Markdown floor, same pages", f"{t_floor:.2f} s ({1000 * t_floor / len(docs):.1f} ms/page)")]
    if not full:
        rows.append(("full mkdocs build", "skipped (pass --site or SKILLC_BENCH_SITE=1)"))
        return rows
    out = workdir / "out"
    _build(corpus, out, cache, "--no-site")  # warm the cache: both timed builds below reuse it
    t_nosite = _build(corpus, out, cache, "--no-site")
    t_site = _build(corpus, out, cache)
    nfiles, nbytes = _size(out)
    site_cost = t_site - t_nosite
    t_rebuild, t_again = _rebuild_after_one_change(corpus, out, cache)
    rows += [("baseline: skillc build --no-site (warm cache)", f"{t_nosite:.1f} s"),
             ("skillc build with the docs site (warm cache)", f"{t_site:.1f} s"),
             ("docs site cost", f"{site_cost:.1f} s ({site_cost / max(t_nosite, 1e-9):.1f}x the rest of the build)"),
             ("docs site cost / Markdown floor", f"{site_cost / max(t_floor, 1e-9):.1f}x"),
             ("site files, size", f"{nfiles:,} files, {nbytes / 1e6:.0f} MB"),
             ("rebuild after one changed skill (incremental site)", f"{t_rebuild:.1f} s"),
             ("rebuild / clean build with the site", f"{t_rebuild / max(t_site, 1e-9):.1%}"),
             ("next rebuild, another skill changed (steady state)", f"{t_again:.1f} s "
                                                                    f"({t_again / max(t_site, 1e-9):.1%} of the clean build)")]
    rows += _page_sizes(out) + _search_bytes(out)
    return rows


def _render_floor(docs: list[str]) -> float:
    """Python-Markdown with the site's extensions plus a minimal Jinja2 page, for every page."""
    import jinja2

    from skillc.emit.docsite.markdown_config import markdown

    page = jinja2.Environment(autoescape=False).from_string(
        "<!doctype html><html><head><title>{{ title|e }}</title></head><body><nav>{{ nav }}</nav>"
        "<article>{{ body }}</article><aside>{{ toc }}</aside></body></html>")
    md = markdown()
    t0 = time.perf_counter()
    for text in docs:
        body = md.reset().convert(text.split("\n---\n", 1)[-1] if text.startswith("---\n") else text)
        page.render(title="t", nav="", body=body, toc=getattr(md, "toc", ""))
    return time.perf_counter() - t0


def _rebuild_after_one_change(corpus: Path, out: Path, cache: Path) -> tuple[float, float]:
    """Change one skill's description, build again (the site's kept state is warm); then another
    skill's, and build again: a rebuild in steady state, where the recycled generation (two builds
    old) holds a site the build removes too."""
    skills = sorted(corpus.rglob("SKILL.md"))
    changed = (skills[len(skills) // 2], skills[len(skills) // 3])
    texts = [skill.read_text(encoding="utf-8") for skill in changed]
    times = []
    try:
        for skill, text in zip(changed, texts):
            skill.write_text(text.replace("description:", "description: Changed.", 1), encoding="utf-8")
            times.append(_build(corpus, out, cache))
    finally:
        for skill, text in zip(changed, texts):
            skill.write_text(text, encoding="utf-8")
    return times[0], times[1]


def _page_sizes(out: Path) -> list[tuple[str, str]]:
    sizes = [p.stat().st_size for p in out.rglob("*.html") if p.is_file() and not p.relative_to(out).as_posix()
             .startswith("api/")]
    return [("site pages", f"{len(sizes):,}"), ("average page", f"{sum(sizes) / max(len(sizes), 1) / 1024:.1f} KiB"),
            ("largest page", f"{max(sizes, default=0) / 1024:.1f} KiB")]


def _search_bytes(out: Path) -> list[tuple[str, str]]:
    """Bytes the header search fetches (``bench_search_bytes``: the index's files, as their ``.gz``
    copies; the snippets come from the index's document chunks, not the catalog's)."""
    from bench_search_bytes import rows_for

    return rows_for(out / "api" / "index")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", action="store_true", help="also time the full mkdocs build (minutes at 10k)")
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from synthetic import make_corpus

    with tempfile.TemporaryDirectory(prefix="skillc-bench-site-") as tmp:
        work = Path(tmp)
        make_corpus(work / "corpus", args.skills, args.seed)
        (work / "run").mkdir()
        rows = run(work / "corpus", work / "run", full=args.site)
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"  {key:<{width}}  {value}")


if __name__ == "__main__":
    main()
