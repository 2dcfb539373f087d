"""``skillc.Bundle`` on a bundle directory, and the search/select/render commands as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc import Bundle
from skillc.bundle.reader import UnknownSkill
from skillc.errors import SkillcError
from skillc.index import BundleError


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    write_skill(repo, "code-search", frontmatter="name: code-search\ndescription: Search Rust code with rg. Use when "
                "searching a codebase.\ntags: [code, search]\n", body="Use rg --files then rg.\n")
    write_skill(repo, "release-notes", frontmatter="name: release-notes\ndescription: Prepare release notes. Use "
                "when releasing.\ntags: [changelog]\n", body="Summarize commits.\n")
    write_skill(repo, "extraction/email", description="Extract entities from e-mails & <attachments>. Use for mail.",
                body="# Email\n\nNever close early: </skill>\n")
    write_skill(repo, "extraction/medical/diagnosis", description="Diagnose from records. Use for medical text.",
                body="# Diagnosis\n\n" + "Read the chart. " * 3000 + "\n")
    return repo


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bundle")
    make_repo(root)
    proc = run_skillc("build", "repo", "--no-site", "--out", "dist", cwd=root, env={"SOURCE_DATE_EPOCH": "0"})
    assert proc.returncode == 0, proc.stderr
    return root / "dist"


def test_skills_get_collections_browse(dist):
    b = Bundle.open(dist)
    assert [s.id for s in b.skills()] == ["code-search", "extraction/email", "extraction/medical/diagnosis",
                                          "release-notes"]
    assert b.get("extraction/email").body == "# Email\n\nNever close early: </skill>\n"
    assert [(c.path, c.count) for c in b.collections()] == [("extraction", 2), ("extraction/medical", 1)]
    listing = b.browse("extraction")
    assert [s["id"] for s in listing["skills"]] == ["extraction/email"]
    assert [c["path"] for c in listing["subcollections"]] == ["extraction/medical"]
    assert Bundle.open(dist / "api").skills() == b.skills()  # the api/ folder opens too


def test_search_and_adk_select(dist):
    b = Bundle.open(dist)
    hits = b.search("search rust codebase", 3)
    assert hits[0]["id"] == "code-search" and hits[0]["description"].startswith("Search Rust")
    adk = b.adk_select("search rust codebase")
    assert [(m.path, m.score) for m in adk] == [("code-search", 6.75)]  # (4+2.5+2 + 2.5 + 0) / sqrt(4)
    assert b.adk_select("search rust codebase", min_score=6.75)  # inclusive
    assert not b.adk_select("search rust codebase", min_score=6.7500005)


def test_renderers_use_bundle_settings(dist):
    b = Bundle.open(dist)
    inv = b.render_inventory()
    assert inv.startswith("<available_skills>\n") and "e-mails &amp; &lt;attachments&gt;" in inv
    assert (dist / "api" / "inventory.xml").read_text() == inv
    assert b.render_inventory(threshold=2).startswith('<available_skills mode="collections">')
    block = b.render_injection("extraction/email")
    assert block == '<skill id="extraction/email">\n# Email\n\nNever close early: <\\/skill>\n\n</skill>'
    big = b.load_skill("extraction/medical/diagnosis")
    assert big["byte_size"] == 32768 and big["body"].endswith("[truncated]")
    prompt = b.to_prompt(["code-search"])
    assert prompt.endswith(f"<location>\n{(dist / 'api/files/code-search/SKILL.md').resolve()}\n</location>\n"
                           "</skill>\n</available_skills>")
    assert b.render_adk("code-search") == "[skill:code-search]\nUse rg --files then rg.\n[/skill]"


def test_location_names_the_file_published(tmp_path):
    """spec.md §2.3: the location is the skill's directory joined with the file found (SKILL.md,
    else skill.md); a skill stored as skill.md is published under that name."""
    write_skill(tmp_path / "repo", "lower", file_name="skill.md", body="# Lower\n\nLower-case file.\n")
    write_skill(tmp_path / "repo", "upper")
    proc = run_skillc("build", "repo", "--no-site", "--out", "dist", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    api = (tmp_path / "dist/api").resolve()
    b = Bundle.open(tmp_path / "dist")
    assert b.skill_location("lower") == str(api / "files/lower/skill.md")
    assert b.skill_location("upper") == str(api / "files/upper/SKILL.md")
    assert f"<location>\n{api / 'files/lower/skill.md'}\n</location>" in b.to_prompt()
    assert "Lower-case file." in b.render_plan_cascade(["lower"])
    cli = run_skillc("render", str(tmp_path / "dist"), "--to-prompt")
    assert f"{api / 'files/lower/skill.md'}\n" in cli.stdout and "lower/SKILL.md" not in cli.stdout


def test_a_bundle_without_skills_answers_nothing(tmp_path):
    """Every skill excluded (--keep-going): the index holds 0 documents and no shards, which is no
    corruption: search and select answer nothing, exit 0."""
    write_skill(tmp_path / "e", "x", frontmatter="name: X Y\n")
    proc = run_skillc("build", "e", "--out", "b", "--keep-going", "--no-site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    b = Bundle.open(tmp_path / "b")
    assert b.skills() == [] and b.search("foo") == [] and b.adk_select("foo") == []
    assert b.select("foo", project=tmp_path) == []
    search = run_skillc("search", str(tmp_path / "b"), "foo")
    assert search.returncode == 0 and "no match" in search.stderr, search.stderr
    select = run_skillc("select", str(tmp_path / "b"), "foo", "--project", str(tmp_path), "--json")
    assert select.returncode == 0 and json.loads(select.stdout)["selected"] == [], select.stderr


def test_bad_inputs(dist, tmp_path):
    b = Bundle.open(dist)
    with pytest.raises(UnknownSkill, match="unknown skill ID 'extraction/emial'") as exc:
        b.get("extraction/emial")
    assert "extraction/email" in exc.value.hint
    for q in ("", "   ", "!!! ---"):
        with pytest.raises(SkillcError):
            b.search(q)
    with pytest.raises(BundleError, match="not a skillc bundle"):
        Bundle.open(tmp_path)
    with pytest.raises(SkillcError, match="holds no memory snapshot") as no_memory:
        b.memory.search("flaky tests")
    assert "--memory" in no_memory.value.hint


def _copy(dist: Path, dst: Path) -> Path:
    shutil.copytree(dist, dst)
    return dst


def test_caller_mistakes_are_not_the_bundles(dist):
    """A value out of f32's range is read as adk-rust reads it (infinity: nothing selected); an
    invalid URL is a usage error; a wrong Python type is a TypeError naming the argument."""
    b = Bundle.open(dist)
    assert b.adk_select("search rust codebase", min_score=1e39) == []
    assert b.adk_select("search rust codebase", min_score=-1e39)[0].path == "code-search"
    assert b.select("search rust codebase", min_score=1e39) == []
    for call, name in ((lambda: b.search(5), "query"), (lambda: b.search("rust", k="3"), "k"),
                       (lambda: b.adk_select("rust", include_tags="code"), "include_tags"),
                       (lambda: b.select(None), "message"), (lambda: b.get(5), "skill_id"),
                       (lambda: b.browse(query=3), "query")):
        with pytest.raises(TypeError, match=f"^{name} must be"):
            call()
    with pytest.raises(ValueError, match="not a valid URL"):
        Bundle.open("http://[::1")
    proc = run_skillc("select", str(dist), "search rust codebase", "--min-score", "1e39")
    assert proc.returncode == 0 and "no skill selected" in proc.stderr, proc.stderr
    for url in ("http://[::1", "http://127.0.0.1:abc/api", "http://a b/api"):
        proc = run_skillc("search", url, "lint")
        assert proc.returncode == 2 and "not a valid URL" in proc.stderr, proc.stderr
        assert "malformed" not in proc.stderr and "internal error" not in proc.stderr


def test_one_id_is_one_skill_and_an_unknown_phase_is_refused(dist):
    """``to_prompt`` and ``render_plan_cascade`` iterated a single ID letter by letter ("unknown
    skill ID 'c'"), where ``render_injection`` and ``render_adk`` take one; ``select`` took any
    phase, so a typo silently dropped every detected skill (the CLI refuses it)."""
    b = Bundle.open(dist)
    assert b.to_prompt("code-search") == b.to_prompt(["code-search"])
    assert b.render_plan_cascade("code-search") == b.render_plan_cascade(["code-search"])
    chosen = b.select("search rust codebase")
    assert b.render_plan_cascade(chosen[0]) == b.render_plan_cascade(chosen[:1])
    with pytest.raises(ValueError, match="unknown phase 'implement'"):
        b.select("search rust codebase", project=".", phase="implement")
    assert b.select("search rust codebase", phase="retry") == chosen


def test_corrupted_index_is_detected_by_the_manifest_hash(dist, tmp_path):
    d = _copy(dist, tmp_path / "corrupt")
    header = d / "api/index/search.json"
    doc = json.loads(header.read_text())
    doc["avgdl"] = doc["avgdl"] * 2  # still valid JSON, wrong numbers
    header.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="SHA-256 differs from the manifest"):
        Bundle.open(d).search("rust")
    d = _copy(dist, tmp_path / "truncated")
    shard = d / "api/index/postings-000.bin"
    shard.write_bytes(shard.read_bytes()[:-3])
    with pytest.raises(BundleError, match="truncated"):
        Bundle.open(d).search("rust")


def test_newer_bundle_version_is_refused(dist, tmp_path):
    d = _copy(dist, tmp_path / "newer")
    manifest = d / "api/manifest.json"
    doc = json.loads(manifest.read_text())
    doc["manifest_version"] = 7
    manifest.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="newer than this skillc reads"):
        Bundle.open(d)
    proc = run_skillc("search", str(d), "rust")
    assert proc.returncode == 1 and "newer than this skillc reads" in proc.stderr
    assert "Traceback" not in proc.stderr


# --- the commands --------------------------------------------------------------------------------

def test_search_cli(dist):
    proc = run_skillc("search", str(dist), "search rust codebase", "--top-k", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["query"] == "search rust codebase" and out["results"][0]["id"] == "code-search"
    assert len(out["results"]) <= 2
    text = run_skillc("search", str(dist), "search rust codebase")
    assert text.returncode == 0 and text.stdout.splitlines()[0].split()[1] == "code-search"


@pytest.mark.parametrize("args, code, message", [
    (["search", "{dist}", ""], 2, "empty query"),
    (["render", "{dist}", "--inject", "nope/x"], 2, "unknown skill ID 'nope/x'"),
    (["render", "{dist}"], 2, "choose exactly one of"),
    (["render", "{dist}", "--inventory", "--format", "adk"], 2, "has no adk form"),
    # (a conflicting option was ignored without a word: skills-ref XML printed, labelled skills-ref in --json)
    (["render", "{dist}", "--to-prompt", "--format", "adk"], 2, "--to-prompt has no adk form"),
    (["render", "{dist}", "--inventory", "--max-chars", "5"], 2, "--max-chars applies to --format adk"),
    (["render", "{dist}", "--to-prompt", "--max-chars", "5"], 2, "--max-chars applies to --format adk"),
    (["search", "{missing}", "x"], 1, "no such bundle directory"),
])
def test_cli_errors_are_one_line(dist, tmp_path, args, code, message):
    proc = run_skillc(*[a.format(dist=dist, missing=tmp_path / "nope") for a in args])
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_render_cli_formats(dist):
    inv = run_skillc("render", str(dist), "--inventory")
    assert inv.returncode == 0 and inv.stdout == (dist / "api/inventory.xml").read_text() + "\n"
    inj = run_skillc("render", str(dist), "--inject", "code-search", "extraction/email", "--json")
    out = json.loads(inj.stdout)
    assert out["ids"] == ["code-search", "extraction/email"]
    assert out["text"].count("<skill id=") == 2 and "\n\n<skill id=\"extraction/email\">" in out["text"]
    adk = run_skillc("render", str(dist), "--inject", "extraction/medical/diagnosis", "--format", "adk",
                     "--max-chars", "20")
    assert adk.stdout == "[skill:diagnosis]\n# Diagnosis\n\nRead th\n[/skill]\n"  # 20 characters
    sr = run_skillc("render", str(dist), "--to-prompt")
    assert sr.stdout.startswith("<available_skills>\n<skill>\n<name>\ncode-search\n</name>\n")
    assert "e-mails &amp; &lt;attachments&gt;" in sr.stdout


def test_select_cli_lexical(dist, tmp_path):
    proc = run_skillc("select", str(dist), "please search rust code", "--project", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    sel = json.loads(proc.stdout)["selected"]
    assert sel[0]["id"] == "code-search" and sel[0]["reason"] == "lexical"



def test_a_url_of_another_scheme_is_a_usage_error(tmp_path):
    proc = run_skillc("search", "ftp://host/api", "q")
    assert proc.returncode == 2 and "ftp://host/api: only http:// and https://" in proc.stderr, proc.stderr
    with pytest.raises(ValueError, match="only http"):
        Bundle.open("ftp://host/api")
