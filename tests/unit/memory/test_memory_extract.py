"""`skillc memory extract`: explicit user commands become entries (0.95) or tombstones, for review."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import PROJECT, run_skillc
from skillc.memory.extract import extract

DATA = PROJECT / "tests" / "data" / "memory"
T0 = "2026-03-01T00:00:00Z"


def test_jsonl_transcript_commands() -> None:
    got = extract((DATA / "transcript.jsonl").read_text(), transcript="t.jsonl", namespace="global", default_time=T0)
    remembered = [(e.content, e.category, e.provenance["line"]) for e in got if not e.forget]
    assert remembered == [
        ("Our staging database is read-only", "fact", 2),
        ("Always use uv to install Python packages", "preference", 4),
        ("Never push directly to main", "preference", 5),
        ("The release branch is called release/next", "fact", 6),
        ("CI runs on Ubuntu 24.04", "fact", 7),
    ]  # not the system prompt, not the assistant, not "I never said …"
    assert all(e.importance == 0.95 and e.source == "extract" for e in got)
    assert [(e.content, e.forget) for e in got if e.forget] == [("I prefer tabs", True), ("Staging database", True)]


def test_plain_text_transcript() -> None:
    got = extract((DATA / "transcript.txt").read_text(), transcript="t.txt", namespace="project/acme", default_time=T0)
    assert [(e.content, e.namespace) for e in got] == [
        ("The API base URL is https://api.acme.test/v2", "project/acme"),
        ("Always run make lint before committing", "project/acme")]
    bare = extract("remember that builds take 4 minutes\n", transcript="x", namespace="global", default_time=T0)
    assert [e.content for e in bare] == ["Builds take 4 minutes"]


def test_cli_writes_a_memory_file_and_tombstones_forget_when_frozen(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "old.yaml").write_text("- {id: tabs, content: 'I prefer tabs over spaces', created_at: 2026-01-01}\n"
                                  "- {id: keep, content: 'Releases are cut on Tuesdays', created_at: 2026-01-01}\n")
    out = mem / "extracted.yaml"
    r = run_skillc("memory", "extract", str(DATA / "transcript.jsonl"), "--into", str(out),
                   env={"SOURCE_DATE_EPOCH": "1772323200"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"extracted 5 memories and 2 tombstones into {out}"
    items = yaml.safe_load(out.read_text())
    assert sum(1 for i in items if i.get("forget")) == 2
    frozen = run_skillc("memory", "freeze", str(mem), "--out", str(tmp_path / "snap"),
                        env={"SOURCE_DATE_EPOCH": "1772323200"})
    assert frozen.returncode == 0, frozen.stderr
    doc = json.loads((tmp_path / "snap" / "snapshot.json").read_text())
    assert {p["id"]: p["reason"].split(" (")[0] for p in doc["pruned"]}["tabs"].startswith("forgotten by forget-")
    assert "keep" in {e["id"] for e in doc["entries"]}
    assert len(doc["tombstones"]) == 2


def test_cli_bad_transcripts(tmp_path: Path) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"role": "user", "content": "remember that x"}\n{"role": "user", "content": \n')
    r = run_skillc("memory", "extract", str(bad), "--into", str(tmp_path / "m.yaml"))
    assert r.returncode == 1 and f"{bad}:2: malformed JSON line" in r.stderr and not (tmp_path / "m.yaml").exists()
    ns = run_skillc("memory", "extract", str(DATA / "transcript.txt"), "--namespace", "team/x")
    assert ns.returncode == 2 and "namespace" in ns.stderr
    secret = tmp_path / "s.txt"
    secret.write_text("user: remember that the API key is sk-ant-api03-Zx8Kq2Lm4Np6Rt8Vw0Yb2Dc4Fg6Hj8Kl0\n")
    s = run_skillc("memory", "extract", str(secret))
    assert s.returncode == 0 and "[REDACTED:anthropic-api-key]" in s.stdout and "Zx8Kq2" not in s.stdout + s.stderr
