"""The publishing gate on rebuilds (issue 21): its verdicts are kept in the build cache by the
bytes' hash *and* the rule set, so a rebuild scans only new bytes, yet a credential added between
two builds (a skill's body, a reference file, a memory) never reaches the rebuilt bundle, and a
verdict reached under another rule set is never reused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import write_skill
from secret_forms import readable_bytes
from skillc import gate
from skillc.build.pipeline import BuildOptions, run_build
from skillc.cache import BuildCache
from skillc.errors import BuildError

GHP = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
SLACK = "xoxb-" + "730519284016-4918273650192-" + "KLzdocJ2isAjIhKtJ0RlgLKO"
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"


def _build(tmp: Path, memory: Path) -> Path:
    out = tmp / "out"
    run_build(BuildOptions(paths=(str(tmp / "repo"),), out=str(out), keep_going=True, site=False,
                           memory=(str(memory),), cache_dir=tmp / "cache", cwd=tmp,
                           env={"SOURCE_DATE_EPOCH": "1700000000"}))
    return out


def _leaked(out: Path, value: str) -> list[str]:
    return [k for k, data in readable_bytes(out).items() if value.encode() in data]


@pytest.mark.parametrize("where", ["body", "reference", "memory"])
def test_a_secret_added_between_builds_is_caught_by_the_rebuild(tmp_path: Path, where: str):
    skill = write_skill(tmp_path / "repo", "skills/notes", body="# Notes\n\nSee references/more.md.\n")
    (skill.parent / "references").mkdir()
    (skill.parent / "references" / "more.md").write_text("# More\n\nNothing secret here.\n")
    memory = tmp_path / "memory.yaml"
    memory.write_text("- {id: m1, category: fact, content: 'The staging host is db.acme.test'}\n")
    out = _build(tmp_path, memory)
    assert (out / "api/files/skills/notes/references/more.md").is_file()
    value = {"body": SLACK, "reference": GHP, "memory": SENDGRID}[where]
    if where == "body":
        skill.write_text(skill.read_text() + f"\nThe bot token is {value}.\n")
    elif where == "reference":
        (skill.parent / "references" / "more.md").write_text(f"# More\n\nUse token {value} to deploy.\n")
    else:
        memory.write_text(memory.read_text() + f"- {{id: m2, category: fact, content: 'SendGrid key {value}'}}\n")
    out = _build(tmp_path, memory)
    assert not _leaked(out, value)
    manifest = json.loads((out / "api/manifest.json").read_text())
    if where != "memory":  # (lint's B707: the skill is left out, --keep-going publishes the rest)
        assert [e["id"] for e in manifest["excluded"]] == ["skills/notes"]


def _bundle_with(tmp_path: Path, data: bytes) -> tuple[Path, dict]:
    out = tmp_path / "bundle"
    (out / "api").mkdir(parents=True)
    (out / "api/notes.md").write_bytes(data)
    return out, {"files": [{"path": "api/notes.md", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}]}


def test_a_clean_verdict_is_reused_only_under_the_same_rule_set(tmp_path: Path):
    """The cache says these bytes were clean: under the rule set it was recorded with, the file is
    not read again; recorded under another rule set (an older scanner), it is scanned and fails."""
    data = f"token: {GHP}\n".encode()
    out, manifest = _bundle_with(tmp_path, data)
    entry = manifest["files"][0]
    for rules, caught in ((gate.ruleset_digest(), False), ("0" * 64, True)):
        cache = BuildCache(tmp_path / f"cache-{caught}")
        cache.put("bundle-clean", entry["sha256"], rules)
        if caught:
            with pytest.raises(BuildError, match="likely secret"):
                gate.check_bundle(out, manifest, cache)
        else:
            gate.check_bundle(out, manifest, cache)  # (the planted verdict is what proves it was not read)


def test_clean_verdicts_are_kept_for_the_next_build(tmp_path: Path):
    out, manifest = _bundle_with(tmp_path, b"# Notes\n\nNothing to hide.\n")
    first = BuildCache(tmp_path / "cache")
    gate.check_bundle(out, manifest, first)
    first.save()
    second = BuildCache(tmp_path / "cache")
    entry = manifest["files"][0]
    assert second.get("bundle-clean", entry["sha256"]) == gate.ruleset_digest()


def test_the_rule_set_digest_covers_the_scanner_and_the_gate():
    """Its source files: any edit to a pattern, a check or how the gate reads a file gives another digest."""
    from skillc import secrets

    h = hashlib.sha256()
    for module in (secrets, gate):
        h.update(Path(module.__file__).read_bytes())
    assert gate.ruleset_digest() == h.hexdigest()


def test_what_the_gate_passed_beside_the_site_is_checked_again_when_the_manifest_lists_other_bytes(tmp_path: Path):
    """The build checks the files that are not the site's while the site is built (``check_files``)
    and the rest after the manifest (``check_bundle``'s ``checked``): a pair passed first is not read
    again, but the same path with other bytes is, and a file that could not be read is not passed."""
    cache = BuildCache(tmp_path / "cache", salt="x")
    out, manifest = _bundle_with(tmp_path, b"# Notes\n\nNothing secret here.\n")
    row = manifest["files"][0]
    passed = gate.check_files(out, [(row["path"], row["sha256"])], cache)
    assert passed == {(row["path"], row["sha256"])}
    gate.check_bundle(out, manifest, cache, passed)
    leaked = f"Use token {GHP} to deploy.\n".encode()
    (out / "api/notes.md").write_bytes(leaked)
    again = {"files": [{**row, "sha256": hashlib.sha256(leaked).hexdigest(), "size": len(leaked)}]}
    with pytest.raises(BuildError, match="likely secret"):
        gate.check_bundle(out, again, cache, passed)
    assert gate.check_files(out, [("api/missing.md", "0" * 64)], cache) == frozenset()


def test_what_the_gate_could_not_read_is_left_for_the_last_check(tmp_path: Path):
    """``unchecked_files``: the pairs ``check_files`` would not pass (a file it could not read), so
    the check after the site's join reads them again; clean ones are not."""
    cache = BuildCache(tmp_path / "cache", salt="x")
    out, manifest = _bundle_with(tmp_path, b"# Notes\n\nNothing secret here.\n")
    row = manifest["files"][0]
    pairs = [(row["path"], row["sha256"]), ("api/missing.md", "0" * 64)]
    assert gate.unchecked_files(out, pairs, cache) == [("api/missing.md", "0" * 64)]
    (out / "api/notes.md").write_bytes(f"token: {GHP}\n".encode())
    with pytest.raises(BuildError, match="likely secret"):
        gate.unchecked_files(out, [("api/notes.md", "1" * 64)], cache)
