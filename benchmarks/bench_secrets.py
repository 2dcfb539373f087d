"""The secret scanner against detect-secrets 1.5.0 and secretlint 13 (recommended preset), as
installed by ``tests/setup/secrets.sh``: what each catches of one credential of every documented
form (``tests/secret_forms.py``), what each reports on real skill repositories (``../shared/corpora``,
where every report is a false positive unless it is a real leaked credential), and how long each
takes on the same files.  The baseline is detect-secrets' time on the same files, in the same run.

``SECRETS_BENCH_CORPORA``: comma-separated corpus folders to time the tools on (default: four
mid-sized ones; the whole of openclaw takes detect-secrets many minutes).  skillc's own counts are
always over every corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
DETECT_SECRETS = ROOT / ".clients" / "detect-secrets" / "bin" / "detect-secrets"
SECRETLINT = ROOT / ".clients" / "secretlint" / "node_modules" / ".bin" / "secretlint"
TIMED = ("anthropics__skills", "getsentry__skills", "hashicorp__agent-skills", "trailofbits__skills")


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _skillc(files: list[Path], strict: bool) -> tuple[float, int, int]:
    from skillc.secrets import scan_bytes

    t0 = time.perf_counter()
    hit = found = 0
    for p in files:
        n = len(scan_bytes(p.read_bytes(), strict))
        hit += n > 0
        found += n
    return time.perf_counter() - t0, hit, found


def _detect_secrets(folder: Path) -> tuple[float, set[str]] | None:
    if not DETECT_SECRETS.exists():
        return None
    t0 = time.perf_counter()
    run = subprocess.run([str(DETECT_SECRETS), "scan", "--all-files", "."], cwd=folder, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    return elapsed, {str(folder / f) for f in json.loads(run.stdout or "{}").get("results", {})}


def _secretlint(folder: Path) -> tuple[float, set[str]] | None:
    if not SECRETLINT.exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "secretlintrc.json"
        config.write_text(json.dumps({"rules": [{"id": "@secretlint/secretlint-rule-preset-recommend"}]}))
        t0 = time.perf_counter()
        run = subprocess.run([str(SECRETLINT), "--secretlintrc", str(config), "--format", "json", f"{folder}/**/*"],
                             cwd=SECRETLINT.parents[2], capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
    try:
        return elapsed, {r["filePath"] for r in json.loads(run.stdout) if r["messages"]}
    except ValueError:
        return elapsed, set()


def _forms(work: Path) -> list[tuple[str, str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from secret_forms import FORMS
    from skillc.secrets import scan

    folder = work / "forms"
    folder.mkdir()
    for i, form in enumerate(FORMS):
        (folder / f"{i:02d}.txt").write_text(form[2] + "\n")
    rows = [("forms (one credential of every documented form)", str(len(FORMS))),
            ("  caught by skillc", str(sum(1 for f in FORMS if scan(f[2]))))]
    ds, sl = _detect_secrets(folder), _secretlint(folder)
    rows.append(("  caught by detect-secrets", str(len(ds[1])) if ds else "not installed"))
    rows.append(("  caught by secretlint (recommended)", str(len(sl[1])) if sl else "not installed"))
    return rows


def run(corpus: Path, workdir: Path) -> list[tuple[str, str]]:
    rows = _forms(workdir)
    if not CORPORA.is_dir():
        return rows + [("corpora", "not beside the project")]
    every = _files(CORPORA)
    secs, hit, found = _skillc(every, strict=False)
    rows.append((f"all corpora: {len(every):,} files, skillc lint reading", f"{found} reports in {hit} files, {secs:.2f} s"))
    secs, hit, found = _skillc(every, strict=True)
    rows.append(("all corpora: skillc publishing gate (strict)", f"{found} values in {hit} files, {secs:.2f} s"))
    names = [n for n in os.environ.get("SECRETS_BENCH_CORPORA", ",".join(TIMED)).split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        # (one folder of the timed corpora, linked, so each tool runs once over the same files)
        timed = Path(tmp) / "timed"
        timed.mkdir()
        for n in names:
            (timed / n).symlink_to(CORPORA / n, target_is_directory=True)
        files = [f for n in names for f in _files(CORPORA / n)]
        secs, hit, _ = _skillc(files, strict=False)
        rows.append((f"timed corpora ({len(files):,} files): skillc", f"{hit} files, {secs:.2f} s"))
        copy = Path(tmp) / "copy"  # (detect-secrets and secretlint do not follow the links)
        subprocess.run(["cp", "-rL", str(timed), str(copy)], check=True)
        ds, sl = _detect_secrets(copy), _secretlint(copy)
        if ds:
            rows.append(("  detect-secrets (baseline)", f"{len(ds[1])} files, {ds[0]:.2f} s"))
            rows.append(("  skillc / detect-secrets time", f"{secs / ds[0]:.3f}"))
        if sl:
            rows.append(("  secretlint", f"{len(sl[1])} files, {sl[0]:.2f} s"))
            if ds:
                rows.append(("  secretlint / detect-secrets time", f"{sl[0] / ds[0]:.3f}"))
    return rows
