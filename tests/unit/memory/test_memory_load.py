"""Loading memory files: YAML and JSONL, every problem with file and line, --keep-going, the schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import PROJECT, run_skillc
from skillc.memory.load import load_paths
from skillc.memory.model import EntryError, entry_from_dict

T0 = "2026-02-01T00:00:00Z"
SCHEMA = json.loads((PROJECT / "schemas" / "memory.schema.json").read_text())


def load(*paths: Path, keep_going: bool = False):
    return load_paths(list(paths), default_time=T0, keep_going=keep_going)


def test_yaml_list_documents_and_jsonl_with_lines(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "a.yaml").write_text("- content: Use pnpm\n  category: preference\n- content: Tests live in tests/\n")
    (mem / "b.yml").write_text("content: one\n---\ncontent: two\nnamespace: project/acme\n")
    (mem / "c.jsonl").write_text('{"content": "three"}\n\n// a comment\n{"content": "four", "type": "semantic"}\n')
    (mem / ".hidden.yaml").write_text("- content: hidden\n")
    (mem / "notes.txt").write_text("not memory")
    result = load(mem)
    assert not result.problems
    assert result.files == ("memory/a.yaml", "memory/b.yml", "memory/c.jsonl")
    assert [(e.content, e.provenance["line"]) for e in result.entries] == [
        ("Use pnpm", 1), ("Tests live in tests/", 3), ("one", 1), ("two", 3), ("three", 1), ("four", 4)]
    assert result.entries[0].provenance["file"] == "memory/a.yaml"
    assert result.entries[3].namespace == "project/acme"
    # defaults: semantic, global, 0.5, times = the build time, a stable derived id
    e = result.entries[2]
    assert (e.type, e.namespace, e.importance, e.created_at, e.last_accessed_at) == ("semantic", "global", 0.5, T0, T0)
    assert e.id.startswith("m-") and e.id == load(mem).entries[2].id


def test_every_problem_is_reported_with_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(
        "- content: fine\n"
        "- content: bad importance\n"
        "  importance: 7\n"
        "- content: wrong category\n"
        "  category: opinion\n"
        "- type: episodic\n"
        "  content: no episode\n"
        "- content: x\n"
        "  note: {kind: gotcha}\n"
    )
    j = tmp_path / "bad.jsonl"
    j.write_text('{"content": "ok"}\n{"content": "broken"\n{"content": "ok too", "colour": "red"}\n')
    result = load(f, j)
    got = [(p.path, p.line, p.message.split(" (")[0]) for p in result.errors]
    assert got == [
        ("bad.yaml", 3, "'importance' must be between 0 and 1, not 7"),
        ("bad.yaml", 5, "'category' must be one of preference, convention, pattern, correction, fact, not 'opinion'"),
        ("bad.yaml", 6, "an episodic memory needs 'episode'"),
        ("bad.yaml", 8, "a per-skill note needs a 'skill/<skill-id>' namespace, not 'global'"),
        ("bad.jsonl", 2, "malformed JSON line: Expecting ',' delimiter"),
        ("bad.jsonl", 3, "unknown field 'colour'"),
    ]
    assert [e.content for e in result.entries] == ["fine", "ok"]


def test_cli_reports_all_problems_and_writes_nothing(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "m.jsonl").write_text('{"content": "good"}\n{not json}\n{"content": "x", "importance": "high"}\n')
    out = tmp_path / "out"
    r = run_skillc("memory", "freeze", str(mem), "--out", str(out))
    assert r.returncode == 1
    assert "memory/m.jsonl:2: error: malformed JSON line" in r.stderr
    assert "memory/m.jsonl:3: error: 'importance' must be a number" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()
    ok = run_skillc("memory", "freeze", str(mem), "--out", str(out), "--keep-going", "--json")
    assert ok.returncode == 0, ok.stderr
    assert "memory/m.jsonl:2: warning: malformed JSON line" in ok.stderr and "skipped" in ok.stderr
    snap = json.loads((out / "snapshot.json").read_text())
    assert [e["content"] for e in snap["entries"]] == ["good"]
    assert [d["line"] for d in snap["diagnostics"]] == [2, 3]


def test_cli_problem_lines_show_file_names_as_the_summary_does(tmp_path: Path) -> None:
    """Each problem line printed the file's name raw: an escape sequence in it ran on a terminal
    (and was stripped in a pipe, naming `ab.yaml` for `a\\x1b[31mb.yaml`), a name that is not UTF-8
    showed `\\udcff`, while the error line below showed both as `\\xNN`."""
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "a\x1b[31mb.yaml").write_text("- 3\n")
    r = run_skillc("memory", "freeze", str(mem), str(tmp_path / "\udcff"), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    problems = [line for line in r.stderr.splitlines() if not line.startswith(("skillc:", "  hint:"))]
    assert sorted(problems) == [f"{tmp_path}/\\xff: error: no such file or folder",
                                "memory/a\\x1b[31mb.yaml:1: error: a memory entry must be a mapping, not int"], r.stderr


def test_huge_values_and_control_characters(tmp_path: Path) -> None:
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"id": "big", "content": "x" * 9000}) + "\n"
                 + json.dumps({"id": "ctl", "content": "bell\u0007 here", "keywords": ["a\u0000b"]}) + "\n")
    strict = load(f)
    assert [(p.line, p.message) for p in strict.errors] == [
        (1, "'content' is 9,000 characters; the limit is 8,000"),
        (2, "'content' contains a control character (U+0007)"),
    ]
    repaired = load(f, keep_going=True)
    assert not repaired.errors
    big, ctl = repaired.entries
    assert len(big.content) == 8000 and ctl.content == "bell here" and ctl.keywords == ("ab",)
    assert {p.message for p in repaired.problems} == {
        "entry 'big': 'content': 9,000 characters capped at 8,000",
        "entry 'ctl': 'content': control characters removed",
        "entry 'ctl': 'keywords[0]': control characters removed"}


# Fields that are not free text (the namespace, supersedes, provenance keys, a field's name) can hold
# a lone surrogate ("\ud800" in JSON) or a control character too: one made snapshot.json unwritable
# (an internal error, or a traceback from the error handler), the other slipped into the snapshot.
@pytest.mark.parametrize("raw, message", [
    ({"content": "c", "\ud800": 1}, "unknown field '\\ud800'"),
    ({"content": "c", "provenance": {"\ud800k": "v"}}, "'provenance' key contains a lone surrogate (U+D800)"),
    ({"content": "c", "provenance": {"k\u0000": "v"}}, "'provenance' key contains a control character (U+0000)"),
    ({"content": "c", "namespace": "project/\ud800"}, "'namespace' must be"),
    ({"content": "c", "namespace": "project/a\u0085b"}, "'namespace' must be"),
    ({"content": "c", "supersedes": ["a\ud800"]}, "'supersedes' must be an id or a list of ids"),
    ({"content": "c", "supersedes": "a\u0000b"}, "'supersedes' must be an id or a list of ids"),
])
def test_lone_surrogates_and_control_characters_outside_text_fields(tmp_path: Path, raw: dict, message: str):
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps(raw) + "\n")
    errors = load(f).errors
    assert [(p.line, message in p.message) for p in errors] == [(1, True)]
    errors[0].message.encode("utf-8")  # (printed and kept in snapshot.json)
    for extra in ((), ("--keep-going",)):
        r = run_skillc("memory", "freeze", str(f), "--out", str(tmp_path / "snap"), *extra)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.returncode == (0 if extra else 1), r.stderr
    snap = (tmp_path / "snap" / "snapshot.json").read_text("utf-8")
    assert not any(c in snap for c in "\x00\x85")


def test_a_provenance_key_with_control_characters_is_repaired_with_keep_going(tmp_path: Path) -> None:
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"id": "p", "content": "c", "provenance": {"ke\u0000y": "v"}}) + "\n")
    repaired = load(f, keep_going=True)
    assert not repaired.errors and repaired.entries[0].provenance["key"] == "v"
    assert [p.message for p in repaired.problems] == ["entry 'p': 'provenance' key: control characters removed"]


@pytest.mark.parametrize("field, value, message", [
    ("created_at", "0001-01-01T00:00:00Z", "is before 1970"),
    ("created_at", "0001-01-01T00:00:00+01:00", "is before 1970"),
    ("updated_at", "1969-12-31", "is before 1970"),
    ("access_count", 10**26, "is larger than 9223372036854775807"),
])
def test_values_a_snapshot_cannot_hold_are_problems_not_crashes(tmp_path: Path, field: str, value, message: str):
    f = tmp_path / "m.jsonl"
    f.write_text(json.dumps({"id": "x", "content": "c", field: value}) + "\n")
    assert [(p.line, message in p.message) for p in load(f).errors] == [(1, True)]
    r = run_skillc("memory", "freeze", str(f), "--out", str(tmp_path / "snap"))
    assert r.returncode == 1 and message in r.stderr and "internal error" not in r.stderr
    assert not (tmp_path / "snap").exists()


def test_a_key_written_twice_is_a_problem(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text('- content: first\n  content: "second"\n- content: fine\n  provenance: {a: 1, a: 2}\n- content: ok\n')
    assert [(p.line, p.message) for p in load(f).errors] == [(2, "duplicate key 'content'"), (4, "duplicate key 'a'")]
    assert [e.content for e in load(f, keep_going=True).entries] == ["ok"]


def test_yaml_aliases_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "alias.yaml"
    f.write_text("- &a {content: one}\n- *a\n")
    assert [p.message for p in load(f).errors] == ["YAML aliases are not allowed in memory files"]
    g = tmp_path / "dup.yaml"
    g.write_text("- {id: x, content: one}\n- {id: x, content: two}\n")
    assert [(p.line, p.message) for p in load(g).errors] == [(2, "duplicate id 'x' (first at dup.yaml:1)")]
    h = tmp_path / "broken.yaml"
    h.write_text("- content: [unclosed\n- content: two\n")
    err = load(h).errors[0]
    assert err.line == 2 and err.message.startswith("malformed YAML")


def test_entries_without_an_id_that_say_the_same_thing_merge_not_collide(tmp_path: Path) -> None:
    # An entry without an id gets m-<hash of namespace + content>, and `memory extract` writes that id
    # into each file: the same sentence remembered in two conversations (or written twice) has the
    # same id by construction.  It is an exact duplicate, which consolidation merges; refusing it as
    # a duplicate id made the README's merge unreachable for such entries and failed the freeze.
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "a.yaml").write_text("- {content: We deploy on Fridays, importance: 0.9, access_count: 2}\n")
    (mem / "b.yaml").write_text("- {content: we deploy on  FRIDAYS, importance: 0.5, access_count: 3}\n")
    assert not load(mem).problems and len(load(mem).entries) == 2
    out = tmp_path / "snap"
    r = run_skillc("memory", "freeze", str(mem), "--out", str(out), "--as-of", "2026-02-01")
    assert r.returncode == 0, r.stderr
    snap = json.loads((out / "snapshot.json").read_text())
    (entry,) = snap["entries"]
    assert entry["content"] == "We deploy on Fridays" and entry["access_count"] == 5
    assert [m["reason"] for m in entry["merged_from"]] == ["duplicate"]
    # `memory extract` in two transcripts: the same memory and the same tombstone in each file
    for name in ("t1", "t2"):
        (tmp_path / f"{name}.txt").write_text("user: remember that we use pnpm\nuser: forget that we use yarn\n")
        r = run_skillc("memory", "extract", str(tmp_path / f"{name}.txt"), "--into", str(mem / f"{name}.yaml"))
        assert r.returncode == 0, r.stderr
    r = run_skillc("memory", "freeze", str(mem), "--out", str(out), "--as-of", "2026-02-01")
    assert r.returncode == 0, r.stderr
    snap = json.loads((out / "snapshot.json").read_text())
    assert sorted(e["content"] for e in snap["entries"]) == ["We deploy on Fridays", "We use pnpm"]
    assert [t["content"] for t in snap["tombstones"]] == ["We use yarn"] * 2
    # Not the same memory (another type, or a tombstone beside the memory): still a duplicate id.
    (mem / "b.yaml").write_text("- {content: We deploy on Fridays, type: episodic,\n"
                                "   episode: {situation: s, action: a, outcome: success}}\n"
                                "- {content: We deploy on Fridays, forget: true}\n")
    assert [p.message.split(" (")[0] for p in load(mem).errors] == [f"duplicate id {entry['id']!r}"] * 2
    # Nor when redaction, which comes first, tells them apart (a secret in one case only).
    (mem / "b.yaml").write_text("- content: We deploy on Fridays ghp_R8kq2ZxT4mWn7Lp0Vb3Yc6Hd9Jf1Gs5Ae2Qu\n"
                                "- content: WE DEPLOY ON FRIDAYS GHP_R8KQ2ZXT4MWN7LP0VB3YC6HD9JF1GS5AE2QU\n")
    assert [p.message.split(" (")[0] for p in load(mem / "b.yaml").errors] == [
        f"duplicate id {load(mem / 'b.yaml', keep_going=True).entries[0].id!r}"]
    g = tmp_path / "explicit.yaml"
    g.write_text("- {id: x, content: one}\n- {id: x, content: one}\n")
    assert [p.message for p in load(g).errors] == ["duplicate id 'x' (first at explicit.yaml:1)"]


def test_not_utf8_and_missing_path(tmp_path: Path) -> None:
    f = tmp_path / "latin.yaml"
    f.write_bytes(b"- content: caf\xe9\n")
    assert load(f).errors[0].message == "not valid UTF-8 (byte 0xe9)"
    assert load(tmp_path / "nope").errors[0].message == "no such file or folder"


def test_timestamps_in_every_store_format() -> None:
    for value, want in [("2026-02-10 09:30:00", "2026-02-10T09:30:00Z"), ("2026-02-10T11:30:00+02:00", "2026-02-10T09:30:00Z"),
                        (1770715800, "2026-02-10T09:30:00Z"), (1770715800000, "2026-02-10T09:30:00Z"),
                        ("2026-02-10", "2026-02-10T00:00:00Z")]:
        e, _ = entry_from_dict({"content": "x", "created_at": value}, default_time=T0)
        assert e.created_at == want, value
    with pytest.raises(EntryError, match="not a timestamp"):
        entry_from_dict({"content": "x", "created_at": "last tuesday"}, default_time=T0)


GOOD = [
    {"content": "Use pnpm", "category": "preference", "keywords": ["pnpm"], "importance": 0.9},
    {"type": "episodic", "content": "CI failed", "episode": {"situation": "s", "action": "a", "outcome": "failure",
                                                               "learnings": ["l"]}},
    {"type": "procedural", "content": "Release", "procedure": {"name": "release", "description": "d", "steps": ["x"],
                                                               "triggers": ["t"], "priority": 1}},
    {"content": "pypdf drops fields", "namespace": "skill/pdf", "category": "correction",
     "note": {"kind": "gotcha", "intent": "merge", "pinned": True, "hit_count": 2, "tier": "global"}},
    {"content": "Prefers React", "structured": {"key": "framework", "value": "React", "confidence": 0.8},
     "supersedes": ["old"], "provenance": {"file": "x", "line": 3}},
    {"content": "forget tabs", "forget": True, "namespace": "conversation/c-1"},
]
BAD = [
    {"content": ""},
    {"content": "x", "type": "opinion"},
    {"content": "x", "category": "mood"},
    {"content": "x", "importance": 1.5},
    {"content": "x", "namespace": "team/x"},
    {"content": "x", "type": "episodic"},
    {"content": "x", "type": "procedural", "category": "fact"},
    {"content": "x", "episode": {"situation": "s", "action": "a", "outcome": "failure"}},
    {"content": "x", "note": {"kind": "gotcha"}},
    {"content": "x", "namespace": "skill/pdf", "note": {"kind": "general"}},
    {"content": "x", "unknown": 1},
    {"content": "x", "access_count": -1},
    {"content": "x" * 8001},
]


@pytest.mark.parametrize("raw", GOOD)
def test_schema_and_loader_accept_the_same_entries(raw: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(raw)
    entry, _ = entry_from_dict(raw, default_time=T0)
    jsonschema.Draft202012Validator(SCHEMA).validate(entry.to_json())  # what skillc writes loads back


@pytest.mark.parametrize("raw", BAD)
def test_schema_and_loader_reject_the_same_entries(raw: dict) -> None:
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(raw))
    with pytest.raises(EntryError):
        entry_from_dict(raw, default_time=T0)


def test_sample_memory_files_validate_against_the_schema() -> None:
    folder = PROJECT / "tests" / "data" / "memory" / "repo" / "memory"
    validator = jsonschema.Draft202012Validator(SCHEMA)
    items = yaml.safe_load((folder / "conventions.yaml").read_text())
    items += [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    for item in items:
        item = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in item.items()}
        assert not list(validator.iter_errors(item)), item["id"]
