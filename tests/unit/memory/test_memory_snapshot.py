"""The frozen snapshot: files, determinism, the seeds' SQLite schemas, prompt.md, <skill-memory> blocks,
secret redaction, and `skillc build` including it all."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from conftest import PROJECT, run_skillc, write_skill
from skillc.memory.render import (
    SkillMemoryConfig,
    prompt_section,
    skill_block,
    skill_memory_config,
)

DATA = PROJECT / "tests" / "data" / "memory" / "repo"
ENV = {"SOURCE_DATE_EPOCH": "1771200000"}  # 2026-02-16T00:00:00Z
TOKEN = "ghp_R8kq2ZxT4mWn7Lp0Vb3Yc6Hd9Jf1Gs5Ae2Qu"


def freeze(tmp_path: Path, *extra: str, name: str = "snap") -> tuple[Path, object]:
    out = tmp_path / name
    r = run_skillc("memory", "freeze", str(DATA / "memory"), "--skills", str(DATA / "skills"), "--out", str(out),
                   *extra, env=ENV)
    return out, r


def test_freeze_writes_every_file_deterministically(tmp_path: Path) -> None:
    out, r = freeze(tmp_path)
    assert r.returncode == 0, r.stderr
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["prompt.md", "skills/pdf.md", "snapshot.json", "snapshot.sqlite"]
    out2, _ = freeze(tmp_path, name="snap2")
    for f in files:
        assert (out / f).read_bytes() == (out2 / f).read_bytes(), f
    assert not os.access(out / "snapshot.sqlite", os.W_OK) or os.geteuid() == 0
    assert (os.stat(out / "snapshot.sqlite").st_mode & 0o777) == 0o444


def test_snapshot_json_content_and_schema(tmp_path: Path) -> None:
    out, _ = freeze(tmp_path)
    doc = json.loads((out / "snapshot.json").read_text())
    entry_schema = json.loads((PROJECT / "schemas" / "memory.schema.json").read_text())
    schema = json.loads((PROJECT / "schemas" / "memory-snapshot.schema.json").read_text())
    registry = Registry().with_resource(entry_schema["$id"], Resource.from_contents(entry_schema))
    jsonschema.Draft202012Validator(schema, registry=registry).validate(doc)
    assert doc["as_of"] == "2026-02-16T00:00:00Z"
    keys = [(e["namespace"].encode(), e["id"].encode()) for e in doc["entries"]]
    assert keys == sorted(keys)
    by_id = {e["id"]: e for e in doc["entries"]}
    assert by_id["pref-tabs"]["status"] == "superseded" and by_id["pref-tabs"]["superseded_by"] == ["pref-spaces"]
    assert by_id["conv-routes"]["merged_from"][0]["id"] == "conv-routes-dup"
    assert by_id["conv-routes"]["access_count"] == 3
    # effective importance = importance × 0.95^(days/7), days since last access (2026-02-15T10:00Z → as_of)
    assert by_id["pref-pnpm"]["effective_importance"] == round(0.9 * 0.95 ** ((14 / 24) / 7), 6)
    assert [p["id"] for p in doc["pruned"]] == ["fact-stack"]
    assert doc["pruned"][0]["reason"].startswith("effective importance 0.")
    # the secret is redacted, audited, and never anywhere in the output
    assert by_id["secret-1"]["content"] == "The deploy token is [REDACTED:github-token] for the bot."
    assert doc["redactions"] == [{"entry": "secret-1", "field": "content", "kind": "github-token", "count": 1}]
    for f in out.rglob("*"):
        if f.is_file():
            assert TOKEN.encode() not in f.read_bytes(), f
    assert doc["counts"]["input"] == 12 and doc["counts"]["kept"] == 10


def test_snapshot_sqlite_opens_in_the_seeds_schemas(tmp_path: Path) -> None:
    out, _ = freeze(tmp_path)
    con = sqlite3.connect(f"{(out / 'snapshot.sqlite').as_uri()}?mode=ro", uri=True)
    assert con.execute("PRAGMA user_version").fetchone() == (1,)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert {"project_memories", "episodic_records", "skill_library", "memories", "memories_fts", "memory_access_log",
            "memories_ai", "memories_ad", "memories_au", "skill_memory", "skill_memory_fts",
            "idx_project_memories_importance", "idx_episodic_records_project"} <= names
    # Plan Cascade: its own queries work (filter by project, category, importance)
    rows = con.execute("SELECT id, category FROM project_memories WHERE project_path = 'acme' AND importance >= 0.1 "
                       "ORDER BY importance DESC").fetchall()
    assert rows == [("pref-pnpm", "preference"), ("warn-executor", "correction"), ("conv-routes", "convention")]
    assert con.execute("SELECT record_type, task_summary FROM episodic_records").fetchall() == [
        ("failure", "Running migrations in CI")]
    assert con.execute("SELECT name FROM skill_library").fetchall() == [("release",)]
    # TalkCody: the seed's FTS query (bm25) and JSON namespace
    hits = con.execute("SELECT m.id, m.namespace FROM memories m JOIN memories_fts ON m.rowid = memories_fts.rowid "
                       "WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 10", ("pnpm",)).fetchall()
    assert hits == [("pref-pnpm", '["project","acme"]')]
    meta = json.loads(con.execute("SELECT metadata FROM memories WHERE id = 'conv-routes'").fetchone()[0])
    assert meta["consolidatedFrom"] == ["conv-routes-dup"] and meta["category"] == "convention"
    assert con.execute("SELECT count(*) FROM memories WHERE id = 'pref-tabs'").fetchone() == (0,)  # superseded
    # seed 003
    assert con.execute("SELECT skill_id, kind, pinned, hit_count FROM skill_memory ORDER BY id").fetchall() == [
        ("pdf", "gotcha", 1, 4), ("pdf", "discovery", 0, 1)]
    assert con.execute("SELECT count(*) FROM skill_memory_fts WHERE skill_memory_fts MATCH 'merging'").fetchone() == (1,)
    with pytest.raises(sqlite3.OperationalError):
        con.execute("DELETE FROM memories")


def test_prompt_md_badges_budget_and_order(tmp_path: Path) -> None:
    out, _ = freeze(tmp_path)
    text = (out / "prompt.md").read_text()
    assert text == (
        "\n## Project Memory\nThe following facts were learned from previous sessions:\n\n"
        "- [PREF] Always use pnpm instead of npm for install, add and run commands.\n"
        "- [WARN] Editing executor.rs requires cargo check because of its type complexity.\n"
        "- [PREF] Indent Python code with four spaces, never tabs.\n"
        "- [CONV] API routes live in src/routes/ and return CommandResponse<T>.\n"
        "- [FACT] The deploy token is [REDACTED:github-token] for the bot.\n\n")
    many = [{"id": f"m{i:03d}", "type": "semantic", "category": "fact", "status": "active", "namespace": "global",
             "content": f"fact number {i} " + "word " * 30, "effective_importance": 1 - i / 1000,
             "last_accessed_at": "2026-01-01T00:00:00Z"} for i in range(100)]
    section = prompt_section(many, budget=2000, max_items=100, min_importance=0.1)
    assert len(section) <= 2000 and section.count("- [FACT]") == 11
    assert section.index("fact number 0 ") < section.index("fact number 1 ")


def test_prompt_md_keeps_the_content_as_stored() -> None:
    # seed 000 §4.3.5: format!("- {} {}\n", badge, memory.content), the content verbatim
    entry = {"id": "m", "type": "semantic", "category": "preference", "status": "active", "namespace": "global",
             "content": "Use  pnpm.\nNever npm.", "effective_importance": 0.9,
             "last_accessed_at": "2026-01-01T00:00:00Z"}
    assert prompt_section([entry]) == (
        "\n## Project Memory\nThe following facts were learned from previous sessions:\n\n"
        "- [PREF] Use  pnpm.\nNever npm.\n\n")


def test_skill_memory_block_format_and_budgets(tmp_path: Path) -> None:
    out, _ = freeze(tmp_path)
    assert (out / "skills" / "pdf.md").read_text() == (
        '<skill-memory skill="pdf" mode="no-intent" count="2" pinned="1">\n'
        '<note kind="gotcha" intent="merge filled forms" hit_count="4" pinned="true">\n'
        "<delta>pypdf drops form fields on merge; use pikepdf for forms.</delta>\n"
        "</note>\n"
        '<note kind="discovery" intent="extract text" hit_count="1" pinned="false">\n'
        "<delta>Scanned PDFs need OCR before text extraction.</delta>\n"
        "</note>\n"
        "</skill-memory>\n\n---\n"
        "*After using this skill, call `ctx_skill_note` — record only gotchas, novel discoveries, or error→fix; "
        "skip routine successes.*\n")
    assert not (out / "skills" / "plain.md").exists()

    def note(i: int, pinned: bool = False, hits: int = 0, day: int = 1) -> dict:
        return {"id": f"n{i}", "content": f"<delta & \"{i}\">" + "x" * 100, "created_at": f"2026-01-{day:02d}T00:00:00Z",
                "last_accessed_at": f"2026-01-{day:02d}T00:00:00Z", "status": "active",
                "note": {"kind": "fix", "intent": "", "hit_count": hits, "pinned": pinned}}

    notes = [note(1, pinned=True), note(2, pinned=True), note(3, hits=9, day=2), note(4, day=9)]
    one_pinned = math.ceil(len(notes[0]["content"]) / 4)  # seed 003's estimate: ceil(len(delta) / 4)
    cfg = SkillMemoryConfig(max_tokens=1500, max_pinned_tokens=one_pinned)
    block = skill_block("a&b", notes, cfg)
    assert block.startswith('<skill-memory skill="a&amp;b" mode="no-intent" count="3" pinned="1">')
    assert "&lt;delta &amp; &quot;1&quot;&gt;" in block and "&quot;2&quot;" not in block
    # no intent: recency_norm + hit_norm, unweighted (n3: 0.125 + 1, n4: 1 + 0), whatever the weights
    for weights in ({"ranking_hit": 1, "ranking_recency": 0}, {"ranking_hit": 0, "ranking_recency": 1}):
        ranked = skill_block("s", notes, skill_memory_config({"skill-memory": {"enabled": True, **weights}}))
        assert ranked.index('hit_count="9"') < ranked.index('&quot;4&quot;')
    tiny = skill_block("s", notes, SkillMemoryConfig(max_tokens=10))
    assert tiny == ""  # nothing fits: no stub
    assert skill_memory_config({"skill-memory": {"enabled": False}}) is None
    assert skill_memory_config({"skill-memory": {"enabled": True, "ranking_relevance": 2, "ranking_recency": 1,
                                                 "ranking_hit": 1}}).ranking_relevance == 0.5


def _seed_note(nid: str, delta: str, *, created: str, used: str | None = None, hits: int = 0,
               pinned: bool = False, intent: str = "") -> dict:
    return {"id": nid, "content": delta, "created_at": f"2026-01-{created}T00:00:00Z",
            "last_accessed_at": f"2026-01-{used or created}T00:00:00Z", "status": "active",
            "note": {"kind": "fix", "intent": intent, "hit_count": hits, "pinned": pinned}}


def _deltas(block: str) -> list[str]:
    return [line[len("<delta>"):-len("</delta>")] for line in block.splitlines() if line.startswith("<delta>")]


def test_skill_memory_no_intent_order_is_seed_003s_unweighted_sql() -> None:
    # PR #181 storage.ts getSkillMemoryNotes: ORDER BY pinned DESC, (recency_norm + hit_norm) DESC,
    # created_at DESC, recency over COALESCE(last_used_at, created_at).  A (used last, no hits) and
    # B (used first, the most hits) both sum to 1, so the newer-created B comes first; the skill's
    # ranking_* weights (recency 0.25 > hit 0.15) must not break that tie.
    notes = [_seed_note("a", "Alpha note.", created="01", used="10"),
             _seed_note("b", "Bravo note.", created="05", hits=3),
             _seed_note("c", "Charlie note.", created="07")]
    cfg = skill_memory_config({"skill-memory": {"enabled": True}})
    assert _deltas(skill_block("pdf", notes, cfg)) == ["Bravo note.", "Alpha note.", "Charlie note."]


def test_skill_memory_budget_counts_the_delta_in_utf16_units() -> None:
    # budgetFill: estimateTokens(note.delta) = Math.ceil(delta.length / 4), a JavaScript length.
    ten = _seed_note("a", "x" * 40, created="01")  # 10 tokens; its <note> XML is ~25
    assert _deltas(skill_block("s", [ten], SkillMemoryConfig(max_tokens=10))) == ["x" * 40]
    emoji = _seed_note("e", "\U0001F600" * 5, created="01")  # 10 UTF-16 units: 3 tokens, not 2
    assert skill_block("s", [emoji], SkillMemoryConfig(max_tokens=2)) == ""
    assert _deltas(skill_block("s", [emoji], SkillMemoryConfig(max_tokens=3))) == ["\U0001F600" * 5]


def test_skill_memory_pinned_budget_is_charged_before_the_total_check() -> None:
    # budgetFill adds a pinned note to pinnedTokens before testing maxTokens: p1 (8 tokens) is turned
    # away by max_tokens 5 but still uses 8 of the 10 pinned tokens, so p2 (4) no longer fits them.
    notes = [_seed_note("p1", "y" * 32, created="02", pinned=True),
             _seed_note("p2", "z" * 16, created="01", pinned=True),
             _seed_note("u", "w" * 4, created="01")]
    block = skill_block("s", notes, SkillMemoryConfig(max_tokens=5, max_pinned_tokens=10))
    assert _deltas(block) == ["w" * 4] and 'pinned="0"' in block


def test_skill_memory_intent_rung_pins_by_recency_then_weights() -> None:
    # recallSkillMemoryBlock "full": getPinnedNotes (most recently used first) ahead of the others
    # ranked by the skill's weights; the weights order the unpinned notes only.
    notes = [_seed_note("p-old", "old pinned", created="01", pinned=True, hits=9),
             _seed_note("p-new", "new pinned", created="03", pinned=True),
             _seed_note("hit", "many hits", created="01", hits=9),
             _seed_note("new", "recent", created="09")]
    by_hits = skill_memory_config({"skill-memory": {"enabled": True, "ranking_hit": 1, "ranking_recency": 0}})
    by_recency = skill_memory_config({"skill-memory": {"enabled": True, "ranking_hit": 0, "ranking_recency": 1}})
    assert _deltas(skill_block("s", notes, by_hits, mode="full", relevance={})) == [
        "new pinned", "old pinned", "many hits", "recent"]
    assert _deltas(skill_block("s", notes, by_recency, mode="full", relevance={})) == [
        "new pinned", "old pinned", "recent", "many hits"]


def test_fail_on_secret_writes_nothing(tmp_path: Path) -> None:
    out, r = freeze(tmp_path, "--fail-on-secret")
    assert r.returncode == 1 and "1 likely secret(s) in 1 memory entry" in r.stderr
    assert TOKEN not in r.stderr + r.stdout and not out.exists()


def test_a_secret_in_an_id_or_namespace_is_redacted_and_references_still_hold(tmp_path: Path) -> None:
    src = tmp_path / "m.yaml"
    src.write_text(f"- {{id: id-{TOKEN}, category: fact, content: plain one, namespace: project/{TOKEN}}}\n"
                   f"- {{id: other, content: two, supersedes: id-{TOKEN}}}\n")
    out = tmp_path / "snap"
    r = run_skillc("memory", "freeze", str(src), "--out", str(out), env=ENV)
    assert r.returncode == 0, r.stderr
    leaked = [p.name for p in out.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert not leaked and TOKEN not in r.stdout + r.stderr
    doc = json.loads((out / "snapshot.json").read_text())
    by_id = {e["id"]: e for e in doc["entries"]}
    (redacted,) = [i for i in by_id if i.startswith("id-[REDACTED:github-token]~")]
    assert by_id[redacted]["namespace"] == "project/[REDACTED:github-token]"
    assert by_id[redacted]["status"] == "superseded" and by_id[redacted]["superseded_by"] == ["other"]
    assert {(a["entry"], a["field"]) for a in doc["redactions"]} == {
        (redacted, "id"), (redacted, "namespace"), ("other", "supersedes[0]")}
    r = run_skillc("memory", "freeze", str(src), "--out", str(tmp_path / "snap2"), "--fail-on-secret", env=ENV)
    assert r.returncode == 1 and not (tmp_path / "snap2").exists()


def test_nothing_is_written_outside_the_output_folder(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    before = {p: p.stat().st_mtime_ns for p in src.rglob("*")}
    out = tmp_path / "out"
    r = run_skillc("memory", "freeze", "--out", str(out), "--skills", "skills", cwd=src, env=ENV)
    assert r.returncode == 0, r.stderr
    assert {p: p.stat().st_mtime_ns for p in src.rglob("*")} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_an_out_folder_that_cannot_be_written_is_one_line_not_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    r = run_skillc("memory", "freeze", str(DATA / "memory"), "--out", str(tmp_path / "afile" / "snap"), env=ENV)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == (f"skillc: error: cannot write the snapshot into {tmp_path / 'afile' / 'snap'}: "
                                        f"{tmp_path / 'afile'} is not a folder")
    assert "internal error" not in r.stderr


def test_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    """`memory memory/conventions.yaml` (a folder and a file in it), as lint reads a path given twice:
    the file's entries are not duplicates of themselves."""
    memory = DATA / "memory"
    once = run_skillc("memory", "freeze", str(memory), "--out", str(tmp_path / "once"), "--json", env=ENV)
    twice = run_skillc("memory", "freeze", str(memory), str(memory / "conventions.yaml"), str(memory),
                       "--out", str(tmp_path / "twice"), "--json", env=ENV)
    assert once.returncode == 0 and twice.returncode == 0, twice.stderr
    assert json.loads(twice.stdout)["counts"] == json.loads(once.stdout)["counts"]
    built = run_skillc("build", str(DATA / "skills"), "--memory", str(memory), "--memory", str(memory),
                       "--out", str(tmp_path / "dist"), "--no-site", env={**ENV, "SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert built.returncode == 0, built.stderr


def test_freeze_settings_from_skills_toml(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    (src / "skills.toml").write_text("[memory.retention]\nmaxMemoriesPerNamespace = 1\n"
                                     "[memory.retrieval]\nmaxMemoriesInPrompt = 1\n")
    r = run_skillc("memory", "freeze", "--out", "out", "--json", cwd=src, env=ENV)
    assert r.returncode == 0, r.stderr
    doc = json.loads((src / "out" / "snapshot.json").read_text())
    assert doc["settings"]["retention"]["maxMemoriesPerNamespace"] == 1
    assert all(n == 1 for n in doc["counts"]["by_namespace"].values())
    assert (src / "out" / "prompt.md").read_text().count("- [") == 1
    (src / "skills.toml").write_text("[memory.retention]\nmaxMemories = 1\n")
    bad = run_skillc("memory", "freeze", "--out", "out2", cwd=src, env=ENV)
    assert bad.returncode == 2 and "skills.toml:2" in bad.stderr and "maxMemories" in bad.stderr


def test_build_includes_the_snapshot_and_skill_blocks(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(repo, "docs/pdf", frontmatter="name: pdf\ndescription: Work with PDF files. Use when handling PDFs.\n"
                "skill-memory:\n  enabled: true\n")
    write_skill(repo, "docs/plain")
    (repo / "memory").mkdir()
    (repo / "memory" / "notes.yaml").write_text(
        "- {content: 'Use pikepdf for forms', namespace: skill/docs/pdf, note: {kind: fix}, importance: 0.8}\n"
        "- {content: 'Releases happen on Tuesdays', category: fact}\n")
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"content": "Prefer small pull requests", "category": "preference", "importance": 0.9}\n')
    out = tmp_path / "dist"
    r = run_skillc("build", str(repo), "--out", str(out), "--no-site", "--memory", str(extra), env=ENV)
    assert r.returncode == 0, r.stderr
    mem = out / "api" / "memory"
    assert (mem / "skills" / "docs%2Fpdf.md").read_text().startswith('<skill-memory skill="docs/pdf"')
    assert not (mem / "skills" / "docs%2Fplain.md").exists()
    doc = json.loads((mem / "snapshot.json").read_text())
    assert {e["content"] for e in doc["entries"]} == {"Use pikepdf for forms", "Releases happen on Tuesdays",
                                                      "Prefer small pull requests"}
    assert "[PREF] Prefer small pull requests" in (mem / "prompt.md").read_text()
    manifest = json.loads((out / "api" / "manifest.json").read_text()) if (out / "api" / "manifest.json").exists() \
        else json.loads(next(out.rglob("manifest.json")).read_text())
    assert "api/memory/snapshot.json" in json.dumps(manifest)
    # a rebuild keeps it; a bad memory file fails the build with file:line
    (repo / "memory" / "bad.jsonl").write_text('{"content": 5, "importance": 3}\n')
    bad = run_skillc("build", str(repo), "--out", str(out), "--no-site", env=ENV)
    assert bad.returncode == 1 and "bad.jsonl:1" in bad.stderr and "Traceback" not in bad.stderr
    assert (mem / "snapshot.json").exists()  # the previous bundle is untouched
    # --keep-going publishes without it, and says what it skipped (text and --json), as `memory freeze` does
    kept = run_skillc("build", str(repo), "--out", str(out), "--no-site", "--keep-going", env=ENV)
    assert kept.returncode == 0 and "warning: " in kept.stderr and "bad.jsonl:1: " in kept.stderr, kept.stderr
    as_json = run_skillc("build", str(repo), "--out", str(out), "--no-site", "--keep-going", "--json", env=ENV)
    assert any("bad.jsonl:1: " in n for n in json.loads(as_json.stdout)["notes"])


def test_freeze_never_writes_through_links_in_the_output_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "snapshot.json").symlink_to(victim)
    (out / "skills").symlink_to(outside, target_is_directory=True)
    r = run_skillc("memory", "freeze", str(DATA / "memory"), "--skills", str(DATA / "skills"), "--out", str(out),
                   env=ENV)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "keep me" and sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert not (out / "snapshot.json").is_symlink() and (out / "skills" / "pdf.md").is_file()


def test_sqlite_ddl_is_the_seeds_own_and_the_app_can_keep_writing(tmp_path: Path) -> None:
    seeds = PROJECT.parent / "shared" / "seeds"
    if seeds.is_dir():
        seed_text = " ".join("".join(p.read_text() for p in seeds.glob("00[01]_*.txt")).split())
        for name in ("plan_cascade.sql", "talkcody.sql"):
            for stmt in (PROJECT / "templates" / "memory" / name).read_text().split(";"):
                body = " ".join(line for line in stmt.splitlines() if not line.lstrip().startswith("-- "))
                if body.strip():
                    assert " ".join(body.split()) in seed_text, stmt[:80]
    out, _ = freeze(tmp_path)
    copy = tmp_path / "app.sqlite"
    copy.write_bytes((out / "snapshot.sqlite").read_bytes())
    con = sqlite3.connect(copy)
    con.execute("INSERT INTO memories (id, type, content, importance, namespace, metadata, created_at, updated_at) "
                "VALUES ('new', 'semantic', 'Prefer ripgrep for searching', 0.8, '[\"global\"]', '{}', 1, 1)")
    con.execute("DELETE FROM memories WHERE id = 'pref-pnpm'")
    assert con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'ripgrep'").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'pnpm'").fetchone() == (0,)
    con.execute("INSERT INTO project_memories (id, project_path, category, content) VALUES ('x', 'acme', 'fact', 'y')")
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO project_memories (id, project_path, category, content) VALUES ('z', 'acme', 'mood', 'y')")


def test_secrets_in_refused_values_provenance_keys_and_keywords_never_leave(tmp_path: Path) -> None:
    src = tmp_path / "m.yaml"
    src.write_text(f"- content: ok entry\n- content: leaky category\n  category: \"password={TOKEN}\"\n"
                   f"- content: provenance key\n  provenance: {{\"{TOKEN}\": 1}}\n"
                   "- content: keyword secrets\n  keywords: [AKIAQ3EGRT5YHN2K7WJM, Deploy]\n")
    out = tmp_path / "snap"
    r = run_skillc("memory", "freeze", str(src), "--out", str(out), "--keep-going", env=ENV)
    assert r.returncode == 0, r.stderr
    for secret in (TOKEN, "AKIAQ3EGRT5YHN2K7WJM", "akiaq3egrt5yhn2k7wjm"):
        assert secret not in r.stdout + r.stderr
        assert not [p.name for p in out.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    entries = {e["content"]: e for e in json.loads((out / "snapshot.json").read_text())["entries"]}
    assert entries["keyword secrets"]["keywords"] == ["[REDACTED:aws-access-key-id]", "deploy"]


def test_only_a_projects_entries_carry_its_project_path(tmp_path: Path) -> None:
    """Plan Cascade looks records up by `project_path = ?`: an episodic entry of `conversation/acme`
    (or a skill's, `skill/acme`) written as `acme` answered the project acme's lookups beside its own."""
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "m.yaml").write_text(
        "".join(f"- {{id: {i}, namespace: {ns}, type: episodic, content: {text}, importance: 0.8,\n"
                f"   episode: {{situation: {text}, action: did it, outcome: success}}}}\n"
                for i, ns, text in (("run-proj", "project/acme", "Deployed acme"),
                                    ("run-chat", "conversation/acme", "Talked about lunch"),
                                    ("run-skill", "skill/acme", "Ran the acme skill"),
                                    ("run-all", "global", "Rotated every key"))))
    r = run_skillc("memory", "freeze", str(mem), "--out", str(tmp_path / "snap"), env=ENV)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(f"{(tmp_path / 'snap' / 'snapshot.sqlite').as_uri()}?mode=ro", uri=True)
    assert con.execute("SELECT id FROM episodic_records WHERE project_path IN ('acme', '*') ORDER BY id").fetchall() \
        == [("run-all",), ("run-proj",)]
    assert dict(con.execute("SELECT id, project_path FROM episodic_records").fetchall()) == {
        "run-proj": "acme", "run-chat": "conversation/acme", "run-skill": "skill/acme", "run-all": "*"}
    con.close()
