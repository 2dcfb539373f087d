"""Claude Code plugin manifests (rules G1xx): `skillc lint` finds `.claude-plugin/marketplace.json` and
`plugin.json`, checks them as Claude Code does, and catches what its validator misses."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import PROJECT, run_skillc, write_skill
from skillc.discover.walk import discover
from skillc.validate.lint import LintConfig, lint_root


def marketplace(root: Path, plugins: list, **extra) -> Path:
    data = {"name": "acme-tools", "owner": {"name": "Acme"}, "metadata": {"description": "Acme's skills"},
            "plugins": plugins, **extra}
    path = root / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def plugin_json(folder: Path, data: dict) -> Path:
    path = folder / ".claude-plugin" / "plugin.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def found(root: Path, select: str = "G") -> list[tuple[str, str, int, str]]:
    result = lint_root(root, LintConfig(select=(select,)))
    return [(d.code, d.path, d.line, d.message) for d in result.diagnostics]


def codes(root: Path) -> list[str]:
    return [c for c, *_ in found(root)]


def test_discovery_lists_manifests_in_byte_order(repo: Path):
    marketplace(repo, [])
    plugin_json(repo / "plugins" / "b", {"name": "b"})
    plugin_json(repo / "plugins" / "a", {"name": "a"})
    (repo / "plugins" / "a" / "plugin.json").write_text("{}")  # not in .claude-plugin/: not a manifest
    assert discover(repo).manifests == (".claude-plugin/marketplace.json", "plugins/a/.claude-plugin/plugin.json",
                                        "plugins/b/.claude-plugin/plugin.json")


def test_a_valid_marketplace_with_its_skills_has_no_finding(repo: Path):
    write_skill(repo, "skills/pdf")
    write_skill(repo, "plugins/docs/skills/notes")
    plugin_json(repo / "plugins" / "docs", {"name": "docs", "version": "1.0.0"})
    marketplace(repo, [
        {"name": "pdf-tools", "source": "./", "strict": False, "skills": ["./skills/pdf"]},
        {"name": "docs", "source": "./plugins/docs"},
        {"name": "remote", "source": {"source": "github", "repo": "acme/remote", "sha": "a" * 40}},
    ])
    assert found(repo) == []


def test_not_json_is_reported_with_its_line_and_fails_the_run(repo: Path):
    path = repo / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir()
    path.write_text('{\n  "name": "tools",\n  "plugins": [],\n}\n', encoding="utf-8")
    assert [(c, line) for c, _, line, _ in found(repo)] == [("G101", 4)]
    proc = run_skillc("lint", str(repo))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert ".claude-plugin/marketplace.json:4:1: G101" in proc.stdout


def test_missing_required_fields_name_the_key_and_line(repo: Path):
    path = repo / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir()
    path.write_text('{\n  "name": "tools",\n  "plugins": [\n    {"name": "x"}\n  ]\n}\n', encoding="utf-8")
    got = [(c, line, msg) for c, _, line, msg in found(repo) if c == "G102"]
    assert [(line, "'owner'" in msg) for _, line, msg in got if "owner" in msg] == [(1, True)]
    assert any(line == 4 and "'source'" in msg for _, line, msg in got)


def test_reserved_and_impersonating_names(repo: Path):
    marketplace(repo, [{"name": "claude-deploy-tools", "source": "./"}], name="claude-plugins-official")
    got = found(repo)
    assert [(c, "claude-plugins-official" in m) for c, _, _, m in got if c == "G103"][0] == ("G103", True)
    assert any(c == "G103" and "claude-deploy-tools" in m for c, _, _, m in got)


def test_anthropic_owned_marketplace_may_use_claude_names(repo: Path):
    write_skill(repo, "skills/claude-api")
    marketplace(repo, [{"name": "claude-api", "source": "./", "skills": ["./skills/claude-api"]}],
                name="anthropic-agent-skills", owner={"name": "A", "email": "someone@anthropic.com"})
    assert "G103" not in codes(repo)


def test_plugin_names_claude_code_refuses_and_names_not_kebab_case(repo: Path):
    marketplace(repo, [{"name": "skills/brand", "source": "./"}, {"name": "My_Plugin", "source": "./"}])
    got = {(c, m.split("'")[1]) for c, _, _, m in found(repo) if c in ("G104", "G105")}
    assert got == {("G104", "skills/brand"), ("G105", "My_Plugin")}


def test_duplicate_plugin_names(repo: Path):
    marketplace(repo, [{"name": "x", "source": "./"}, {"name": "x", "source": "./"}])
    assert [(c, line) for c, _, line, _ in found(repo) if c == "G106"] == [("G106", 15)]


@pytest.mark.parametrize("source, why", [
    ("plugins/x", "must start with './'"),
    ("./../outside", "contains '..'"),
    ("/abs/path", "is absolute"),
    (".\\plugins\\x", "backslashes"),
])
def test_source_paths_must_be_dot_slash_inside(repo: Path, source: str, why: str):
    marketplace(repo, [{"name": "x", "source": source}])
    assert [why in m for c, _, _, m in found(repo) if c == "G107"] == [True]


def test_short_sha_in_a_source_object(repo: Path):
    marketplace(repo, [{"name": "x", "source": {"source": "github", "repo": "a/b", "sha": "abc123"}}])
    assert codes(repo) == ["G107"]


def test_listed_skill_folders_that_do_not_exist(repo: Path):
    write_skill(repo, "skills/pdf")
    marketplace(repo, [{"name": "docs", "source": "./", "skills": ["./skills/pdf", "./skills/xlsx"]},
                       {"name": "gone", "source": "./plugins/gone"}])
    got = [(c, m) for c, _, _, m in found(repo)]
    assert [c for c, _ in got] == ["G108", "G108"]
    assert "./skills/xlsx" in got[0][1] and "./plugins/gone" in got[1][1]


def test_listed_skill_failing_the_specification(repo: Path):
    write_skill(repo, "skills/pdf", frontmatter="name: PDF Tools\ndescription: Reads PDFs.\n")
    marketplace(repo, [{"name": "docs", "source": "./", "skills": ["./skills/pdf"]}])
    got = [(c, m) for c, _, _, m in found(repo, "ALL") if c.startswith("G")]
    assert [c for c, _ in got] == ["G111"] and "S30" in got[0][1]


def test_default_skills_folder_of_a_plugin_is_checked(repo: Path):
    write_skill(repo, "plugins/docs/skills/bad", frontmatter="description: no name\n")
    plugin_json(repo / "plugins" / "docs", {"name": "docs", "version": "1.0.0"})
    marketplace(repo, [{"name": "docs", "source": "./plugins/docs"}])
    got = found(repo, "ALL")
    assert [(c, p) for c, p, _, _ in got if c == "G111"] == [("G111", ".claude-plugin/marketplace.json"),
                                                          ("G111", "plugins/docs/.claude-plugin/plugin.json")]


def test_plugin_manifest_component_paths_version_and_metadata(repo: Path):
    folder = repo / "plugin"
    plugin_json(folder, {"name": "p", "version": "1.0", "commands": "../shared", "agents": ["./agents"]})
    got = sorted((c, m) for c, _, _, m in found(repo))
    assert [c for c, _ in got] == ["G107", "G108", "G109"]
    plugin_json(folder, {"name": "p"})
    assert [(c, sev) for c, sev in ((d.code, d.severity.value) for d in
                                    lint_root(repo, LintConfig(select=("G",))).diagnostics)] == [("G110", "info")]


def test_manifest_rules_follow_profiles_and_selection(repo: Path):
    marketplace(repo, [{"name": "x", "source": "plugins/x"}])
    assert [d.code for d in lint_root(repo, LintConfig()).diagnostics] == ["G107"]
    assert [d.code for d in lint_root(repo, LintConfig(profile="claude")).diagnostics] == ["G107"]
    assert [d.code for d in lint_root(repo, LintConfig(profile="spec")).diagnostics] == []
    assert [d.code for d in lint_root(repo, LintConfig(ignore=("G107",))).diagnostics] == []


def test_hostile_manifest_never_tracebacks(repo: Path):
    path = repo / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir()
    for text in ("[]", '"x"', "\x00\xff", '{"plugins": {"a": 1}, "owner": [], "name": 3}', "{" * 5000):
        path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
        proc = run_skillc("lint", "--select", "G", str(repo))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr and "internal error" not in proc.stderr, text


def test_real_marketplaces_of_the_corpora(corpora: Path):
    # anthropics/skills lists four document skills the corpus copy leaves out (their licence): found.
    got = found(corpora / "anthropics__skills")
    assert sorted(m.split("'")[1] for c, _, _, m in got if c == "G108") == [
        "./skills/docx", "./skills/pdf", "./skills/pptx", "./skills/xlsx"]
    # trailofbits publishes a plugin whose name passes as Anthropic's (claude plugin validate refuses it)
    assert {c for c, *_ in found(corpora / "trailofbits__skills")} == {"G103"}


@pytest.mark.parametrize("name", ["claude-marketplace.schema.json", "claude-plugin.schema.json"])
def test_manifest_schemas_are_valid_with_skillc_ids(name: str):
    doc = json.loads((PROJECT / "schemas" / name).read_text("utf-8"))
    assert doc["$id"] == f"https://skillc.dev/schemas/{name}"
    jsonschema.Draft202012Validator.check_schema(doc)


def test_a_manifest_named_on_the_command_line_is_linted(repo: Path, tmp_path: Path):
    # (pre-commit passes changed files: a manifest among them is checked, from inside or outside)
    path = marketplace(repo, [{"name": "x", "source": "plugins/x"}])
    for cwd in (repo, tmp_path):
        proc = run_skillc("lint", str(path), cwd=cwd)
        assert proc.returncode == 1 and "G107" in proc.stdout and "note:" not in proc.stderr, proc.stderr


def test_build_runs_the_manifest_stage_as_lint_does(repo: Path, tmp_path: Path):
    """`skillc build` reports the G1xx diagnostics `skillc lint` reports on the same folder, and a
    manifest error fails the build (exit 1, nothing written) as a skill's lint error does; with
    --keep-going the skills are published and the manifest's lint summary lists the findings."""
    write_skill(repo, "skills/pdf")
    marketplace(repo, [{"name": "pdf-tools", "source": "./", "strict": False,
                        "skills": ["./skills/pdf", "./skills/gone"]},  # G108: not there (an error)
                       {"name": "My_Tools", "source": "./"}])  # G105: a warning
    linted = [(c, line) for c, _, line, _ in found(repo, "ALL")]
    assert sorted(linted) == [("G105", 20), ("G108", 16)]
    out = tmp_path / "out"
    built = run_skillc("build", str(repo), "--out", str(out), "--no-site", "--no-cache", cwd=tmp_path)
    assert built.returncode == 1 and "Traceback" not in built.stderr
    assert ".claude-plugin/marketplace.json:16:9: G108" in built.stderr
    assert "1 manifest failed lint: repo: .claude-plugin/marketplace.json (G108)" in built.stderr
    assert not out.exists()
    kept = run_skillc("build", str(repo), "--out", str(out), "--no-site", "--no-cache", "--keep-going", cwd=tmp_path)
    assert kept.returncode == 0, kept.stderr
    manifest = json.loads((out / "api" / "manifest.json").read_text(encoding="utf-8"))
    assert (out / "api" / "skills" / "skills%2Fpdf.json").is_file()
    assert sorted((d["code"], d["line"]) for d in manifest["lint"]["diagnostics"]) == sorted(linted)
