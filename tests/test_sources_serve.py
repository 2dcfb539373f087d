"""The http source and `skillc export` against a real `skillc build` bundle served by `skillc serve`."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import run_skillc, skillc_command, write_skill
from skillc.lint import LintConfig
from skillc.resolve_types import Repository, Tier
from skillc.sources import open_source


@pytest.fixture
def served(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "extraction/email", body="# Email\n\nExtract entities.\n")
    write_skill(repo, "pdf")
    (repo / "pdf/references").mkdir()
    (repo / "pdf/references/guide.md").write_text("guide\n")
    dist = tmp_path / "dist"
    r = run_skillc("build", str(repo), "--out", str(dist), "--no-site", cwd=tmp_path)
    if r.returncode != 0:
        pytest.skip(f"skillc build is not usable here: {r.stderr[-300:]}")
    proc = subprocess.Popen([*skillc_command(), "serve", str(dist), "--port", "0", "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"\(API: (http://[^)]+/api)\)", line)
        assert m, line
        yield dist, m.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_source_reads_a_skillc_bundle(tmp_path, served):
    _, api = served
    repo = Repository("remote", "http", api, Tier.USER, 150, refresh_seconds=0)
    listing = open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()
    assert [s.id for s in listing.skills] == ["extraction/email", "pdf"]
    email = listing.skills[0]
    assert email.document.body == "# Email\n\nExtract entities.\n" and email.name == "email"
    # a second read after expiry revalidates with the server's ETags
    again = open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()
    assert [s.document.sha256 for s in again.skills] == [s.document.sha256 for s in listing.skills]


def test_export_from_the_url_and_from_the_bundle_directory(tmp_path, served):
    dist, api = served
    out = tmp_path / "email.zip"
    r = run_skillc("export", api, "extraction/email", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["email/SKILL.md"] and b"Extract entities." in zf.read("email/SKILL.md")
    out2 = tmp_path / "pdf.zip"
    r = run_skillc("export", str(dist), "pdf", "-o", str(out2))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out2) as zf:
        assert "pdf/SKILL.md" in zf.namelist()
