"""Importers: real SQLite databases created from the seeds' DDL, and sample Letta / Mem0 files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from conftest import PROJECT, run_skillc
from skillc.memory.importers import LETTA_LABELS, ImportProblem, detect, import_source

DATA = PROJECT / "tests" / "data" / "memory"
DDL = PROJECT / "templates" / "memory"
T0 = "2026-02-01T00:00:00Z"


def make_db(path: Path, ddl: str, rows: dict[str, list[dict]]) -> Path:
    con = sqlite3.connect(path)
    con.executescript((DDL / ddl).read_text())
    for table, items in rows.items():
        for row in items:
            cols = ", ".join(row)
            con.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))
    con.commit()
    con.close()
    return path


@pytest.fixture
def plan_cascade(tmp_path: Path) -> Path:
    return make_db(tmp_path / "plan-cascade.db", "plan_cascade.sql", {
        "project_memories": [
            {"id": "pm-1", "project_path": "/home/dev/acme", "category": "preference",
             "content": "Use pnpm not npm", "keywords": '["pnpm", "npm"]', "importance": 0.9, "access_count": 12,
             "source_session_id": "abc123", "created_at": "2026-02-10 09:00:00", "updated_at": "2026-02-10 09:00:00",
             "last_accessed_at": "2026-02-15 10:00:00"},
            {"id": "pm-2", "project_path": "/home/dev/acme", "category": "correction",
             "content": "Editing executor.rs requires cargo check", "importance": 0.95},
        ],
        "episodic_records": [
            {"id": "ep-1", "project_path": "/home/dev/acme", "session_id": "s-9", "record_type": "failure",
             "task_summary": "Run the migrations", "approach_summary": "sqlx migrate run",
             "outcome_summary": "failed: no DATABASE_URL", "tools_used": '["bash"]', "keywords": '["sqlx"]'},
            {"id": "ep-2", "project_path": "/home/dev/acme", "session_id": "s-9", "record_type": "discovery",
             "task_summary": "Find the router", "approach_summary": "grep for Router", "outcome_summary": "src/routes"},
        ],
        "skill_library": [
            {"id": "sk-1", "project_path": "/home/dev/acme", "name": "release", "description": "Cut a release",
             "tags": '["release"]', "body": "# Release\n\n1. bump the version\n2. tag\n- push the tag\n",
             "source_type": "generated", "usage_count": 3, "success_rate": 0.8},
        ],
    })


def test_plan_cascade_tables_become_typed_entries(plan_cascade: Path) -> None:
    assert detect(plan_cascade) == "plan-cascade"
    result = import_source(plan_cascade, None, default_time=T0)
    by_id = {e.id: e for e in result.entries}
    assert set(by_id) == {"pm-1", "pm-2", "ep-1", "ep-2", "sk-1"} and not result.skipped
    pm = by_id["pm-1"]
    assert (pm.type, pm.category, pm.namespace) == ("semantic", "preference", "project/home/dev/acme")
    assert pm.keywords == ("pnpm", "npm") and pm.access_count == 12
    assert pm.last_accessed_at == "2026-02-15T10:00:00Z" and pm.provenance["session_id"] == "abc123"
    ep = by_id["ep-1"]
    assert ep.type == "episodic" and ep.episode.outcome == "failure"
    assert (ep.episode.situation, ep.episode.action) == ("Run the migrations", "sqlx migrate run")
    assert by_id["ep-2"].episode.outcome == "partial" and by_id["ep-2"].provenance["record_type"] == "discovery"
    sk = by_id["sk-1"]
    assert sk.type == "procedural" and sk.procedure.name == "release"
    assert sk.procedure.steps == ("bump the version", "tag", "push the tag")
    assert sk.importance == 0.8 and sk.access_count == 3


def test_talkcody_memories_with_json_namespace_and_metadata(tmp_path: Path) -> None:
    meta = {"category": "convention", "accessCount": 4, "lastAccessedAt": 1771000000000, "tags": ["api"],
            "extractionMethod": "auto", "sourceConversationId": "c-1"}
    db = make_db(tmp_path / "talkcody.db", "talkcody.sql", {"memories": [
        {"id": "t-1", "type": "semantic", "content": "API routes live in src/routes", "importance": 0.7,
         "namespace": '["project", "acme"]', "metadata": json.dumps(meta), "created_at": 1770000000000,
         "updated_at": 1770000000000},
        {"id": "t-2", "type": "procedural", "content": "Review code before merging", "importance": 0.6,
         "namespace": '["global"]', "metadata": json.dumps({"procedure": {"name": "review", "description": "Review",
                                                                           "steps": ["read", "comment"]}}),
         "created_at": 1770000000000, "updated_at": 1770000000000},
        {"id": "t-3", "type": "semantic", "content": "Odd namespace", "importance": 0.5,
         "namespace": '["team", "x"]', "metadata": "{}", "created_at": 1770000000000, "updated_at": 1770000000000},
    ]})
    assert detect(db) == "talkcody"
    result = import_source(db, None, default_time=T0)
    by_id = {e.id: e for e in result.entries}
    t1 = by_id["t-1"]
    assert (t1.namespace, t1.category, t1.access_count, t1.tags) == ("project/acme", "convention", 4, ("api",))
    assert t1.last_accessed_at == "2026-02-13T16:26:40Z" and t1.created_at == "2026-02-02T02:40:00Z"
    assert by_id["t-2"].procedure.steps == ("read", "comment")
    assert result.skipped == ("memories t-3: namespace '[\"team\", \"x\"]' is not global, project, conversation or skill",)


def test_skill_memory_rows_become_per_skill_notes(tmp_path: Path) -> None:
    db = make_db(tmp_path / "sm.db", "skill_memory.sql", {"skill_memory": [
        {"skill_id": "pdf", "tier": "project", "project_identity": "acme", "intent": "merge forms", "kind": "gotcha",
         "delta": "pypdf drops form fields", "tags": '["forms"]', "hit_count": 3, "pinned": 1,
         "normalized_hash": "h1", "created_at": 1770000000000, "last_used_at": 1770500000000, "recall_count": 2,
         "source_type": "historian"},
        {"skill_id": "pdf", "tier": "global", "project_identity": "*", "kind": "workflow",
         "delta": "Flatten, then merge", "normalized_hash": "h2", "created_at": 1770000000000},
    ]})
    assert detect(db) == "skill-memory"
    notes = import_source(db, None, default_time=T0).entries
    first, second = notes
    assert first.namespace == "skill/pdf" and first.category == "correction"
    assert (first.note.kind, first.note.pinned, first.note.hit_count, first.note.recall_count) == ("gotcha", True, 3, 2)
    assert first.tags == ("forms",) and first.provenance["source_type"] == "historian"
    assert second.type == "procedural" and second.note.tier == "global"


def test_letta_blocks_map_labels_to_categories() -> None:
    result = import_source(DATA / "agent.af", None, default_time=T0)
    assert result.format == "letta"
    got = {(e.content, e.type, e.category) for e in result.entries}
    assert ("Prefers concise answers", "semantic", "preference") in got  # bullets become one entry each
    assert ("Uses pnpm, never npm", "semantic", "preference") in got
    assert any(c == "semantic" and cat == "correction" for _, c, cat in got)
    persona = next(e for e in result.entries if e.provenance["label"] == "persona")
    assert persona.type == "procedural" and persona.procedure.name == "persona"
    unknown = next(e for e in result.entries if e.provenance["label"] == "team_notes")
    assert unknown.category == "fact" and unknown.keywords == ("team_notes",)
    assert all(e.provenance["agent"] == "coder" for e in result.entries)
    assert LETTA_LABELS["learned_corrections"][1] == "correction"


def test_letta_file_of_another_version_is_refused() -> None:
    with pytest.raises(ImportProblem, match=r"version 0\.6\.47 .*not supported"):
        import_source(DATA / "agent_v1.af", None, default_time=T0)


def test_mem0_get_all_json() -> None:
    result = import_source(DATA / "mem0.json", None, default_time=T0)
    assert result.format == "mem0"
    a, b = result.entries
    assert (a.content, a.category, a.namespace, a.provenance["user_id"]) == (
        "Prefers dark mode in every editor", "preference", "global", "alice")
    assert b.namespace == "conversation/run-42" and b.created_at == "2026-01-06T10:00:00Z"
    assert result.skipped == ("results[2]: an item needs a 'memory' string",)


def test_sqlite_without_expected_tables_names_what_is_missing(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (id TEXT)")
    con.commit()
    con.close()
    with pytest.raises(ImportProblem, match="missing project_memories.*memories.*skill_memory.*it has: notes"):
        detect(db)
    with pytest.raises(ImportProblem, match="missing table.*memories"):
        import_source(db, "talkcody", default_time=T0)


def test_sqlite_with_missing_columns_names_them(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT, namespace TEXT)")
    con.commit()
    con.close()
    with pytest.raises(ImportProblem, match="table memories lacks column.*type, importance, metadata, created_at"):
        import_source(db, None, default_time=T0)


def test_cli_import_writes_a_reviewable_file_and_redacts(tmp_path: Path, plan_cascade: Path) -> None:
    con = sqlite3.connect(plan_cascade)
    con.execute("INSERT INTO project_memories (id, project_path, category, content) VALUES "
                "('pm-3', '/home/dev/acme', 'fact', 'Bot token ghp_R8kq2ZxT4mWn7Lp0Vb3Yc6Hd9Jf1Gs5Ae2Qu in CI')")
    con.commit()
    con.close()
    out = tmp_path / "repo" / "memory" / "imported.yaml"
    r = run_skillc("memory", "import", str(plan_cascade), "--into", str(out), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["format"] == "plan-cascade" and summary["entries"] == 6
    assert summary["redactions"] == [{"entry": "pm-3", "field": "content", "kind": "github-token", "count": 1}]
    text = out.read_text()
    assert "ghp_R8kq" not in text and "[REDACTED:github-token]" in text
    assert "ghp_R8kq" not in r.stdout + r.stderr
    items = yaml.safe_load(text)
    assert {i["id"] for i in items} == {"pm-1", "pm-2", "pm-3", "ep-1", "ep-2", "sk-1"}
    # the written file loads back and freezes
    frozen = run_skillc("memory", "freeze", str(out.parent), "--out", str(tmp_path / "snap"), "--as-of", "2026-02-16")
    assert frozen.returncode == 0, frozen.stderr
    # an existing file is not overwritten without --force
    again = run_skillc("memory", "import", str(plan_cascade), "--into", str(out))
    assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr
    # --fail-on-secret writes nothing
    other = tmp_path / "other.yaml"
    failed = run_skillc("memory", "import", str(plan_cascade), "--into", str(other), "--fail-on-secret")
    assert failed.returncode == 1 and not other.exists() and "secret" in failed.stderr


def test_cli_import_of_a_bad_source_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    sqlite3.connect(db).execute("CREATE TABLE t (a)").connection.commit()
    r = run_skillc("memory", "import", str(db), "--into", str(tmp_path / "m.yaml"))
    assert r.returncode == 1 and "missing project_memories" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "m.yaml").exists()
    v1 = run_skillc("memory", "import", str(DATA / "agent_v1.af"), "--into", str(tmp_path / "m.yaml"))
    assert v1.returncode == 1 and "not supported" in v1.stderr and "hint:" in v1.stderr


def test_cli_import_bad_rows_and_huge_values_need_keep_going(tmp_path: Path) -> None:
    src = tmp_path / "mem0.json"
    src.write_text(json.dumps({"results": [
        {"id": "ok", "memory": "Prefers short commit messages"},
        {"id": "huge", "memory": "y" * 9000},
        {"id": "ctl", "memory": "tab\u0007bell"},
        {"hash": "no memory"},
    ]}))
    out = tmp_path / "m.jsonl"
    r = run_skillc("memory", "import", str(src), "--into", str(out))
    assert r.returncode == 1 and not out.exists()
    assert "error: cannot import results[3]: an item needs a 'memory' string" in r.stderr
    assert "error: results[1] (huge): 'content': 9,000 characters capped at 8,000" in r.stderr
    assert "error: results[2] (ctl): 'content': control characters removed" in r.stderr
    ok = run_skillc("memory", "import", str(src), "--into", str(out), "--keep-going", "--json")
    assert ok.returncode == 0, ok.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], len(r["content"])) for r in rows] == [("ok", 29), ("huge", 8000), ("ctl", 7)]
    assert json.loads(ok.stdout)["repaired"] and "warning:" in ok.stderr


def test_mem0_ids_that_are_not_strings_or_numbers_are_refused(tmp_path: Path) -> None:
    """An object as `run_id` or `id` would become its Python repr in the namespace or the ID."""
    src = tmp_path / "mem0.json"
    src.write_text(json.dumps({"results": [
        {"id": "ok", "memory": "Prefers short commit messages", "run_id": "r1"},
        {"id": "obj", "memory": "x", "run_id": {"x": 1}},
        {"id": ["a"], "memory": "y"},
        {"id": 7, "memory": "numbers are IDs too", "run_id": 3},
    ]}))
    out = tmp_path / "m.jsonl"
    r = run_skillc("memory", "import", str(src), "--into", str(out))
    assert r.returncode == 1 and not out.exists()
    assert "error: cannot import results[1]: 'run_id' must be a string or a number" in r.stderr
    assert "error: cannot import results[2]: 'id' must be a string or a number" in r.stderr
    ok = run_skillc("memory", "import", str(src), "--into", str(out), "--keep-going")
    assert ok.returncode == 0, ok.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["namespace"]) for r in rows] == [("ok", "conversation/r1"), ("7", "conversation/3")]


# --- hostile sources -------------------------------------------------------------------------------

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"


def test_a_secret_in_a_refused_value_is_never_printed(tmp_path: Path) -> None:
    db = make_db(tmp_path / "pc.db", "plan_cascade.sql", {"project_memories": [
        {"id": "pm-1", "project_path": "/a", "category": "fact", "content": "c", "importance": 0.5,
         "created_at": f"password={TOKEN}"}]})
    r = run_skillc("memory", "import", str(db), "--into", str(tmp_path / "m.yaml"), "--keep-going", "--json")
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout + r.stderr and "[REDACTED:" in r.stdout


def test_invalid_utf8_in_a_cell_is_named_not_quoted(tmp_path: Path) -> None:
    db = make_db(tmp_path / "pc.db", "plan_cascade.sql", {})
    con = sqlite3.connect(db)
    con.execute("INSERT INTO project_memories (id, project_path, category, content, importance) "
                "VALUES ('m1', '/a', 'fact', CAST(? AS TEXT), 0.5)", ((f"token {TOKEN} ").encode() + b"\xff",))
    con.commit()
    con.close()
    r = run_skillc("memory", "import", str(db), "--into", str(tmp_path / "m.yaml"))
    assert r.returncode == 1 and "a value of column 'content' is not UTF-8 text" in r.stderr
    assert TOKEN not in r.stderr
    # --keep-going imports the other rows (one such cell stopped the whole import) and names the row
    con = sqlite3.connect(db)
    con.execute("INSERT INTO project_memories (id, project_path, category, content, importance) "
                "VALUES ('m2', '/a', 'fact', 'Use pnpm.', 0.5)")
    con.commit()
    con.close()
    r = run_skillc("memory", "import", str(db), "--into", str(tmp_path / "m.yaml"), "--keep-going")
    assert r.returncode == 0, r.stderr
    assert "project_memories row 1: a value of column 'content' is not UTF-8 text" in r.stderr
    assert "Use pnpm." in (tmp_path / "m.yaml").read_text() and TOKEN not in r.stderr


def test_a_wal_database_is_read_without_writing_beside_it(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    db = make_db(src / "pc.db", "plan_cascade.sql", {})
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=wal")
    con.execute("INSERT INTO project_memories (id, project_path, category, content, importance) "
                "VALUES ('m1', '/a', 'fact', 'only in the log', 0.5)")
    con.commit()  # (not checkpointed: the row lives in pc.db-wal while this connection is open)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    scratch = tmp_path / "scratch"  # (the command's temporary folder: its copy of the database goes there)
    scratch.mkdir()
    try:
        r = run_skillc("memory", "import", str(db), "--into", str(tmp_path / "m.yaml"), env={"TMPDIR": str(scratch)})
        assert r.returncode == 0, r.stderr
        assert "only in the log" in (tmp_path / "m.yaml").read_text()
        assert {p.name: p.read_bytes() for p in src.iterdir()} == before
        assert list(scratch.iterdir()) == []  # (the copy is removed: the command leaves without atexit)
    finally:
        con.close()


def test_a_recursive_view_is_not_read(tmp_path: Path) -> None:
    db = tmp_path / "view.db"
    con = sqlite3.connect(db)
    con.execute("CREATE VIEW memories AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
                "SELECT 'id' || x AS id, 'semantic' AS type, 'c' AS content FROM r")
    con.commit()
    con.close()
    r = run_skillc("memory", "import", str(db), "--from", "talkcody", "--into", str(tmp_path / "m.yaml"), timeout=60)
    assert r.returncode == 1 and "missing table" in r.stderr


@pytest.mark.parametrize("body, words", [
    ('{"results":[{"id":"a","memory":"hello \\ud800 world"}]}', "lone surrogate"),
    # (over Python's int-string conversion limit: a malformed-JSON error at its line, as any reader says)
    ('{"results":[{"id":' + "9" * 5000 + ',"memory":"x"}]}', "m0.json:1: malformed JSON: an integer of 5,000 digits"),
    ('{"results":[{"id":"a","memory":"x","metadata":{"keywords":5}}]}', "not a valid mem0 source"),
])
def test_hostile_values_are_reported_and_nothing_is_overwritten(tmp_path: Path, body: str, words: str) -> None:
    src = tmp_path / "m0.json"
    src.write_text(body)
    keep = tmp_path / "keep.jsonl"
    keep.write_text('{"content": "precious"}\n')
    r = run_skillc("memory", "import", str(src), "--from", "mem0", "--into", str(keep), "--force")
    assert r.returncode == 1 and words in r.stderr and "internal error" not in r.stderr, r.stderr
    assert keep.read_text() == '{"content": "precious"}\n'


def test_into_a_link_and_from_a_fifo_are_refused(tmp_path: Path, plan_cascade: Path) -> None:
    import os

    (tmp_path / "memory").mkdir()
    (tmp_path / "memory/link.yaml").symlink_to(tmp_path / "outside.yaml")
    r = run_skillc("memory", "import", str(plan_cascade), "--into", str(tmp_path / "memory/link.yaml"))
    assert r.returncode != 0 and "symbolic link" in r.stderr and not (tmp_path / "outside.yaml").exists()
    os.mkfifo(tmp_path / "fifo")
    r = run_skillc("memory", "import", str(tmp_path / "fifo"), "--into", str(tmp_path / "f.yaml"), timeout=30)
    assert r.returncode == 1 and "not a regular file" in r.stderr
    r = run_skillc("memory", "extract", str(tmp_path / "fifo"), timeout=30)
    assert r.returncode == 1 and "not a regular file" in r.stderr


def test_an_importance_out_of_range_is_refused_in_every_format(tmp_path: Path) -> None:
    """Mem0's `metadata.importance` 1.4 and Plan Cascade's `success_rate` 1.3 were silently made 0.5
    (and reported as nothing); like project_memories' importance they are refused, named."""
    src = tmp_path / "mem0.json"
    src.write_text(json.dumps({"results": [{"id": "a", "memory": "Use pnpm.", "metadata": {"importance": 1.4}},
                                           {"id": "b", "memory": "Tabs.", "metadata": {"importance": 0.3}}]}))
    result = import_source(src, "mem0", default_time=T0)
    assert [e.id for e in result.entries] == ["b"] and result.entries[0].importance == 0.3
    assert result.skipped == ("results[0] (a): 'importance' must be between 0 and 1, not 1.4",)


def test_import_then_freeze_keeps_enabled_and_the_notes_source_type(tmp_path: Path) -> None:
    """Plan Cascade's lookups filter skill_library on enabled = 1 and seed 003 marks the historian's
    notes source_type 'historian': the frozen tables wrote enabled 1 and skillc's source for every row."""
    pc = make_db(tmp_path / "pc.db", "plan_cascade.sql", {"skill_library": [
        {"id": "off", "project_path": "/p", "name": "old", "description": "Disabled", "body": "# old\n",
         "source_type": "generated", "success_rate": 0.4, "enabled": 0},
        {"id": "on", "project_path": "/p", "name": "new", "description": "Enabled", "body": "# new\n",
         "source_type": "generated", "success_rate": 0.9, "enabled": 1},
    ]})
    sm = make_db(tmp_path / "sm.db", "skill_memory.sql", {"skill_memory": [
        {"skill_id": "pdf", "tier": "global", "project_identity": "*", "kind": "discovery", "delta": "Use qpdf",
         "normalized_hash": "h", "created_at": 1770000000000, "source_type": "historian", "origin_project": "a"},
    ]})
    mem = tmp_path / "repo" / "memory"
    for src in (pc, sm):
        r = run_skillc("memory", "import", str(src), "--into", str(mem / f"{src.stem}.yaml"))
        assert r.returncode == 0, r.stderr
    frozen = run_skillc("memory", "freeze", str(mem), "--out", str(tmp_path / "snap"), "--as-of", "2026-02-16")
    assert frozen.returncode == 0, frozen.stderr
    con = sqlite3.connect(f"{(tmp_path / 'snap' / 'snapshot.sqlite').as_uri()}?mode=ro", uri=True)
    assert con.execute("SELECT id FROM skill_library WHERE project_path = ? AND enabled = 1 "
                       "ORDER BY success_rate DESC", ("/p",)).fetchall() == [("on",)]
    assert con.execute("SELECT id, enabled FROM skill_library ORDER BY id").fetchall() == [("off", 0), ("on", 1)]
    assert con.execute("SELECT source_type, origin_project FROM skill_memory").fetchall() == [("historian", "a")]
    con.close()
