"""skills.toml, external-skills.json and .plan-cascade/skills.json → BuildConfig."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.config.build import expand_env, json_lines, load_build_config
from skillc.errors import ConfigError
from skillc.resolve_types import Tier


def load(tmp_path: Path, paths=(), config=None, env=None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_build_config(list(paths), config, cwd=tmp_path / "proj", home=home, env=env or {})


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    return tmp_path / "proj"


def test_no_config_no_paths_is_the_embedded_repository_alone(tmp_path, proj):
    cfg = load(tmp_path)
    assert [(r.name, r.type, r.tier) for r in cfg.repositories] == [("embedded", "embedded", Tier.BUILTIN)]
    assert cfg.enabled and cfg.max_injection_bytes == 32768 and cfg.inventory_threshold == 12
    assert cfg.config_files == ()


def test_paths_become_project_filesystem_repositories_in_order(tmp_path, proj):
    cfg = load(tmp_path, paths=["b", "a"])
    assert [(r.type, Path(r.location).name, r.tier, r.order) for r in cfg.repositories] == [
        ("filesystem", "b", Tier.PROJECT, 0), ("filesystem", "a", Tier.PROJECT, 1)]


SEED = """
enabled = true
max_injection_bytes = 1000
inventory_threshold = 5

[[repositories]]
name = "project"
type = "filesystem"
path = ".rkat/skills"

[[repositories]]
name = "company"
type = "git"
url = "https://github.com/company/skills.git"
git_ref = "v1.2.0"
ref_type = "tag"
auth_token = "${GITHUB_TOKEN}"

[[repositories]]
name = "elephant"
type = "http"
url = "http://elephant:8080/api"
auth_header = "X-API-Key"
auth_token = "${ELEPHANT_API_KEY}"
refresh_seconds = 60
"""


def test_seed_004_example(tmp_path, proj):
    (proj / ".rkat").mkdir()
    (proj / ".rkat" / "skills.toml").write_text(SEED)
    cfg = load(tmp_path, env={"GITHUB_TOKEN": "t1", "ELEPHANT_API_KEY": "k2"})
    project, company, elephant = cfg.repositories
    assert project.location == str(proj / ".rkat" / "skills")  # relative to the project root, not .rkat/
    assert (company.git_ref, company.ref_type, company.auth_token) == ("v1.2.0", "tag", "t1")
    assert (elephant.auth_header, elephant.auth_token, elephant.refresh_seconds) == ("X-API-Key", "k2", 60)
    assert project.refresh_seconds == 300 and company.priority == 250 and project.tier is Tier.PROJECT
    assert (cfg.max_injection_bytes, cfg.inventory_threshold, cfg.include_embedded) == (1000, 5, False)
    assert [o.order for o in cfg.repositories] == [0, 1, 2]
    assert len(cfg.config_files) == 1 and len(cfg.config_files[0][1]) == 64
    assert "t1" not in repr(company)  # tokens are not in reprs


def test_project_then_user_dedup_first_wins_and_project_scalars(tmp_path, proj):
    home = tmp_path / "home"
    (home / ".rkat").mkdir(parents=True)
    (proj / "skills.toml").write_text(
        'inventory_threshold = 3\n[[repositories]]\nname = "project"\ntype = "filesystem"\npath = "p"\n'
        '[[repositories]]\nname = "company"\ntype = "filesystem"\npath = "c-project"\n')
    (home / ".rkat" / "skills.toml").write_text(
        'inventory_threshold = 99\ninclude_embedded = true\n'
        '[[repositories]]\nname = "company"\ntype = "filesystem"\npath = "c-user"\n'
        '[[repositories]]\nname = "personal"\ntype = "filesystem"\npath = "mine"\n')
    cfg = load(tmp_path)
    assert [r.name for r in cfg.repositories] == ["project", "company", "personal"]
    company = cfg.repositories[1]
    assert company.location.endswith("c-project")
    personal = cfg.repositories[2]
    assert personal.location == str(home / "mine") and personal.tier is Tier.USER  # user file: user tier
    assert cfg.inventory_threshold == 3 and not cfg.include_embedded  # scalars from the project file
    assert len(cfg.config_files) == 2


def test_include_embedded_adds_builtin_tier_last(tmp_path, proj):
    (proj / "skills.toml").write_text('include_embedded = true\n[[repositories]]\nname = "a"\ntype = "zip"\npath = "a.zip"\n')
    cfg = load(tmp_path)
    assert [r.name for r in cfg.repositories] == ["a", "embedded"]
    assert cfg.repositories[-1].tier is Tier.BUILTIN and cfg.repositories[-1].order == 1


def test_explicit_config_replaces_lookup(tmp_path, proj):
    (proj / "skills.toml").write_text('[[repositories]]\nname = "ignored"\ntype = "filesystem"\npath = "x"\n')
    other = tmp_path / "other.toml"
    other.write_text('[[repositories]]\nname = "only"\ntype = "filesystem"\npath = "y"\n')
    cfg = load(tmp_path, config=str(other))
    assert [r.name for r in cfg.repositories] == ["only"]
    assert cfg.repositories[0].location == str(tmp_path / "y")


def test_extensions_tier_priority_globs(tmp_path, proj):
    (proj / "skills.toml").write_text(
        '[[repositories]]\nname = "ext"\ntype = "filesystem"\npath = "e"\ntier = "external"\npriority = 60\n'
        'include = ["extraction/*"]\nexclude = "extraction/old"\nskills_root = "skills/"\n')
    (repo,) = load(tmp_path).repositories
    assert (repo.tier, repo.priority, repo.include, repo.exclude, repo.skills_root) == (
        Tier.EXTERNAL, 60, ("extraction/*",), ("extraction/old",), "skills")


@pytest.mark.parametrize("body, line, words", [
    ('[[repositories]]\nname = "a"\ntype = "filesystem"\npath = "x"\ntier = "user"\npriority = 250\n', 6,
     "outside the user tier's range (101-200)"),
    ('enabled = true\n\n[[repositories]]\nname = "a"\ntype = "ftp"\npath = "x"\n', 5, "type"),
    ('[[repositories]]\nname = "a"\ntype = "filesystem"\npath = "x"\n\n[[repositories]]\nname = "b"\n'
     'type = "filesystem"\npath = "y"\ncolour = "red"\n', 10, "unknown key(s) in repositories[1]: colour"),
    ('[[repositories]]\nname = "g"\ntype = "git"\nurl = "https://h/${TOKEN"\n', 4, "without a closing"),
    ('[[repositories]]\nname = "g"\ntype = "git"\nurl = "https://h/x"\nauth_token = "${}"\n', 5, "empty variable"),
    ('[[repositories]]\nname = "g"\ntype = "http"\nurl = "https://h/x"\nauth_token = "${NOPE}"\n', 5,
     "NOPE is not set"),
    ('[[repositories]]\nname = "g"\ntype = "git"\npath = "x"\n', 1, "url"),
    ('inventory_threshold = "12"\n', 1, "inventory_threshold"),
    ('[[repositories]]\nname = "a"\ntype = "filesystem"\npath = "x"\nskills_root = "../up"\n', 5,
     "inside the repository"),
    # git would read these as options
    ('[[repositories]]\nname = "g"\ntype = "git"\nurl = "--upload-pack=touch /tmp/x"\n', 4, "must not start with '-'"),
    ('[[repositories]]\nname = "g"\ntype = "git"\nurl = "https://h/x"\ngit_ref = "--output=x"\n', 5,
     "must not start with '-'"),
    ('[[repositories]]\nname = "h"\ntype = "http"\nurl = "file:///etc/passwd"\n', 4, "http:// or https://"),
])
def test_config_errors_name_file_and_line(tmp_path, proj, body, line, words):
    (proj / "skills.toml").write_text(body)
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    message = str(exc.value)
    assert message.startswith(f"{proj / 'skills.toml'}:{line}:"), message
    assert words in message


def test_env_expansion_rules():
    env = {"A": "1", "B_2": "two"}
    assert expand_env("x${A}y${B_2}", env) == "x1ytwo"
    assert expand_env("$A stays", env) == "$A stays"
    for bad in ("${", "${}", "${MISSING}", "${1x}", "a${A"):
        with pytest.raises(ValueError):
            expand_env(bad, env)


def test_secret_never_in_the_error(tmp_path, proj):
    (proj / "skills.toml").write_text('[[repositories]]\nname = "g"\ntype = "git"\nurl = "https://${U}@h/${NOPE}"\n')
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, env={"U": "supersecretvalue"})
    assert "supersecretvalue" not in str(exc.value)



def test_env_is_expanded_only_in_the_repositories_the_build_reads(tmp_path, proj):
    """A user-level entry superseded by the project's of the same name, or any entry when PATH
    arguments replace them, never needs its ${VAR}; one the build reads still does."""
    home = tmp_path / "home"
    (home / ".rkat").mkdir(parents=True)
    (home / ".rkat" / "skills.toml").write_text(
        '[[repositories]]\nname = "company"\ntype = "git"\nurl = "https://h/c.git"\nauth_token = "${GITHUB_TOKEN}"\n')
    (proj / "skills.toml").write_text('[[repositories]]\nname = "company"\ntype = "filesystem"\npath = "c"\n'
                                      '[[repositories]]\nname = "remote"\ntype = "http"\nurl = "${API}"\n')
    assert [r.type for r in load(tmp_path, paths=["skills"]).repositories] == ["filesystem"]
    cfg = load(tmp_path, env={"API": "http://127.0.0.1:9/api"})
    assert [(r.name, r.type) for r in cfg.repositories] == [("company", "filesystem"), ("remote", "http")]
    with pytest.raises(ConfigError, match="environment variable API is not set"):
        load(tmp_path)
    (proj / "skills.toml").write_text('[[repositories]]\nname = "other"\ntype = "filesystem"\npath = "c"\n')
    with pytest.raises(ConfigError, match="environment variable GITHUB_TOKEN is not set"):
        load(tmp_path)


# ---------------------------------------------------------------- Plan Cascade

EXTERNAL = {
    "version": "1.1.0",
    "priority_ranges": {"builtin": {"min": 1, "max": 50}, "submodule": {"min": 51, "max": 100},
                        "user": {"min": 101, "max": 200}},
    "sources": {"builtin": {"type": "builtin", "path": "builtin-skills"},
                "vercel": {"type": "submodule", "path": "external-skills/vercel",
                           "repository": "https://github.com/vercel-labs/agent-skills"}},
    "skills": {
        "python-best-practices": {"source": "builtin", "skill_path": "python",
                                  "detect": {"files": ["pyproject.toml"], "patterns": []},
                                  "inject_into": ["planning", "implementation", "retry"], "priority": 30},
        "react-best-practices": {"source": "vercel", "skill_path": "skills/react-best-practices",
                                 "detect": {"files": ["package.json"], "patterns": ["\"react\"", "\"next\""]},
                                 "inject_into": ["planning", "implementation", "retry"], "priority": 100},
    },
    "settings": {"max_skills_per_story": 3, "max_content_lines": 200, "cache_enabled": True},
}


def external_skill_folders(proj: Path) -> None:
    """The skill folders EXTERNAL names (a missing one is an error)."""
    for rel in ("builtin-skills/python", "external-skills/vercel/skills/react-best-practices"):
        (proj / rel).mkdir(parents=True, exist_ok=True)


def test_external_skills_json(tmp_path, proj):
    (proj / "external-skills.json").write_text(json.dumps(EXTERNAL, indent=2))
    external_skill_folders(proj)
    cfg = load(tmp_path)
    py, react = cfg.repositories
    assert (py.tier, py.priority, py.include, py.location) == (Tier.BUILTIN, 30, ("python",), str(proj / "builtin-skills"))
    assert (react.tier, react.priority, react.include) == (Tier.EXTERNAL, 100, ("react-best-practices",))
    assert react.location == str(proj / "external-skills/vercel/skills")
    skills = {s.name: s for s in cfg.external.skills}
    assert skills["react-best-practices"].detect_patterns == ('"react"', '"next"')
    assert skills["react-best-practices"].id == "react-best-practices" and skills["python-best-practices"].id == "python"
    assert skills["python-best-practices"].inject_into == ("planning", "implementation", "retry")
    assert cfg.external.settings["max_skills_per_story"] == 3
    assert "embedded" not in [r.name for r in cfg.repositories]


def test_external_skills_priority_out_of_range_names_the_line(tmp_path, proj):
    data = json.loads(json.dumps(EXTERNAL))
    data["skills"]["react-best-practices"]["priority"] = 150
    text = json.dumps(data, indent=2)
    (proj / "external-skills.json").write_text(text)
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    want = next(i for i, ln in enumerate(text.splitlines(), 1) if '"priority": 150' in ln)
    assert f"external-skills.json:{want}:" in str(exc.value) and "51-100" in str(exc.value)


def test_external_skills_schema_error_line(tmp_path, proj):
    data = json.loads(json.dumps(EXTERNAL))
    data["skills"]["python-best-practices"]["inject_into"] = ["lunch"]
    text = json.dumps(data, indent=2)
    (proj / "external-skills.json").write_text(text)
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    want = next(i for i, ln in enumerate(text.splitlines(), 1) if '"lunch"' in ln)
    assert f":{want}:" in str(exc.value)


def test_user_skills_default_priority_and_override(tmp_path, proj):
    (proj / "external-skills.json").write_text(json.dumps(EXTERNAL))
    (proj / ".plan-cascade").mkdir()
    (proj / ".plan-cascade" / "skills.json").write_text(json.dumps({"version": "1.0.0", "skills": [
        {"name": "my-custom-skill", "path": "./my-skills/custom/SKILL.md", "detect": {"files": ["package.json"],
                                                                                       "patterns": ["my-framework"]}},
        {"name": "react-best-practices", "path": "../react", "priority": 180, "inject_into": ["retry"]},
    ]}))
    external_skill_folders(proj)
    (proj / ".plan-cascade" / "my-skills" / "custom").mkdir(parents=True)
    (proj / "react").mkdir()
    cfg = load(tmp_path)
    by_name = {r.name: r for r in cfg.repositories}
    custom = by_name["user-my-custom-skill"]
    assert (custom.tier, custom.priority, custom.include) == (Tier.USER, 150, ("custom",))
    assert custom.location == str(proj / ".plan-cascade" / "my-skills")
    ext = {s.name: s for s in cfg.external.skills}
    assert ext["react-best-practices"].priority == 180 and ext["react-best-practices"].inject_into == ("retry",)
    assert ext["my-custom-skill"].inject_into == ("implementation",)


def test_user_skill_priority_range(tmp_path, proj):
    (proj / ".plan-cascade").mkdir()
    (proj / ".plan-cascade" / "skills.json").write_text('{"skills": [\n  {"name": "x", "path": "x",\n   "priority": 90}\n]}')
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    assert "skills.json:3:" in str(exc.value) and "101" in str(exc.value)


def test_invalid_json_names_line(tmp_path, proj):
    (proj / "external-skills.json").write_text('{\n  "skills": {,\n}')
    with pytest.raises(ConfigError, match=r"external-skills.json:2: invalid JSON"):
        load(tmp_path)


def test_json_lines():
    lines = json_lines('{\n "a": [\n  1,\n  {"b": 2}\n ],\n "c": "x"\n}')
    assert lines[("a",)] == 2 and lines[("a", 0)] == 3 and lines[("a", 1, "b")] == 4 and lines[("c",)] == 6


def test_lint_and_build_read_the_globs_from_the_configuration_files_folder(tmp_path: Path):
    """`per-path-ignores` and `exclude` are relative to skills.toml's folder for `skillc lint`,
    `skillc lint skills` and `skillc build` alike."""
    proj = tmp_path / "proj"
    write_skill(proj, "skills/a", frontmatter="name: a\ndescription: Use when: asked\n")  # P209
    write_skill(proj, "skills/b", frontmatter="name: b\ndescription: Use when: asked\n")
    (proj / "skills.toml").write_text('[[repositories]]\nname = "team"\ntype = "filesystem"\npath = "skills"\n\n'
                                      '[lint]\nexclude = ["skills/b"]\n[lint.per-path-ignores]\n"skills/a/*" = ["P209"]\n')
    for args in ((), ("skills",)):
        r = run_skillc("lint", *args, "--format", "json", cwd=proj)
        report = json.loads(r.stdout)
        assert r.returncode == 0 and report["summary"]["skills"] == 1 and report["diagnostics"] == [], (args, report)
    b = run_skillc("build", "--out", str(tmp_path / "out"), "--no-site", cwd=proj,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert b.returncode == 0, b.stderr
    assert [s["id"] for s in json.loads((tmp_path / "out/api/skills.json").read_text())["skills"]] == ["a"]


def test_a_configuration_with_nothing_to_build_is_an_error(tmp_path: Path):
    """A skills.toml holding only [lint] must not publish an empty registry and report success."""
    (tmp_path / "skills.toml").write_text('[lint]\nprofile = "spec"\n')
    r = run_skillc("build", "--out", "out", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 2 and "skills.toml: no repository to build" in r.stderr and "hint:" in r.stderr
    assert not (tmp_path / "out").exists()
    (tmp_path / "skills.toml").write_text('include_embedded = true\n[lint]\nprofile = "spec"\n')
    ok = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert ok.returncode == 0, ok.stderr


def test_top_level_keys_match_the_schema():
    from skillc.config.files import TOP_LEVEL_KEYS

    schema = json.loads((Path(__file__).resolve().parents[3] / "schemas" / "skills-toml.schema.json").read_text())
    assert set(TOP_LEVEL_KEYS) == set(schema["properties"]) | {"lint", "memory"}


@pytest.mark.parametrize("text, line, words", [
    ("inventory_treshold = 5\n", 1, "unknown key 'inventory_treshold'; did you mean 'inventory_threshold'?"),
    ("# c\n[lnt]\nignore = ['B701']\n", 2, "unknown key 'lnt'; did you mean 'lint'?"),
    ("[[repository]]\nname = 'x'\n", 1, "unknown key 'repository'; did you mean 'repositories'?"),
    ("[memroy]\nmaxMemories = 3\n", 1, "unknown key 'memroy'; did you mean 'memory'?"),
    ("# c\n[lint]\nprofile = 'spec'\n\n\nignore = ['Q12']\n", 6, "no rule code starts with 'Q12'"),
])
def test_a_typo_in_the_configuration_is_named_with_its_line(tmp_path: Path, text: str, line: int, words: str):
    """Typos of skillc's own keys are errors at their line, in lint, build and memory freeze alike;
    another tool's table (Meerkat reads skills.toml too) is left alone."""
    (tmp_path / "skills.toml").write_text(text)
    for args in (("lint", "."), ("build", "--out", "out"), ("memory", "freeze", ".", "--out", "m")):
        r = run_skillc(*args, cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
        if args[0] == "memory" and "Q12" in words:
            continue  # (memory freeze does not read [lint])
        assert r.returncode == 2 and f"skills.toml:{line}: " in r.stderr and words in r.stderr, (args, r.stderr)
    (tmp_path / "skills.toml").write_text("[meerkat]\nfoo = 1\n")
    assert run_skillc("lint", ".", cwd=tmp_path).returncode == 0


def test_pyproject_tool_skillc_refuses_any_unknown_key(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.skillc.lnt]\nignore = ['B701']\n")
    r = run_skillc("lint", ".", cwd=tmp_path)
    assert r.returncode == 2 and "pyproject.toml:1: unknown key 'lnt'; did you mean 'lint'?" in r.stderr


def test_globs_reach_outside_a_configuration_below_the_root(tmp_path: Path):
    """A config file below what is linted sees the paths outside its folder as `../…`."""
    (tmp_path / ".git").mkdir()
    for rel in ("x/legacy/old", "x/good"):
        write_skill(tmp_path, rel, body="# T\n\n[l](nothere.md)\n")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg/skills.toml").write_text('[lint]\nexclude = ["../x/good"]\n[lint.per-path-ignores]\n'
                                              '"../x/legacy/*" = ["B704"]\n')
    for args in (("x",), (".",)):
        r = run_skillc("lint", "--config", "cfg/skills.toml", *args, "--format", "json", cwd=tmp_path)
        report = json.loads(r.stdout)
        assert report["diagnostics"] == [] and report["summary"]["skills"] == 1, (args, report)


def test_rkat_globs_are_relative_to_the_project(tmp_path: Path):
    """.rkat/skills.toml speaks for the project around it, for its repository paths and its globs."""
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path, "skills/legacy/old", body="# T\n\n[l](nothere.md)\n")
    (tmp_path / ".rkat").mkdir()
    (tmp_path / ".rkat/skills.toml").write_text('[[repositories]]\nname = "p"\ntype = "filesystem"\npath = "skills"\n'
                                                '[lint.per-path-ignores]\n"skills/legacy/*" = ["B704"]\n')
    r = run_skillc("lint", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["diagnostics"] == []
    b = run_skillc("build", "--out", "out", "--no-site", "--json", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert b.returncode == 0 and json.loads(b.stdout)["warnings"] == 0, b.stdout + b.stderr


def test_a_pyproject_error_names_the_line_in_tool_skillc(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n\n[tool.skillc]\nversion = 2\n')
    r = run_skillc("lint", ".", cwd=tmp_path)
    assert r.returncode == 2 and "pyproject.toml:6: unknown key 'version'; known: lint, memory" in r.stderr


def test_build_reads_pyproject_lint_as_lint_does(tmp_path: Path):
    """With no skills.toml, `[tool.skillc.lint]` configures `skillc build` as it configures `skillc
    lint`, its globs anchored at pyproject.toml's folder."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    write_skill(proj, "skills/a", frontmatter="name: a\ndescription: Use when: asked\n")  # P209
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.skillc.lint.per-path-ignores]\n'
                                         '"skills/a/*" = ["P209"]\n')
    lint = run_skillc("lint", "skills", "--format", "json", cwd=proj)
    assert json.loads(lint.stdout)["diagnostics"] == [], lint.stdout
    for cwd, arg in ((proj, "skills"), (proj / "skills", ".")):
        b = run_skillc("build", arg, "--out", str(tmp_path / "out"), "--no-site", "--json", cwd=cwd,
                       env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")})
        assert b.returncode == 0 and json.loads(b.stdout)["warnings"] == 0, (cwd, b.stdout + b.stderr)
    cfg = load_build_config(["skills"], None, cwd=proj, home=tmp_path / "home", env={})
    assert cfg.lint.source == str(proj / "pyproject.toml")
    assert [Path(p).name for p, _ in cfg.config_files] == ["pyproject.toml"]


def test_a_path_with_dotdot_is_normalised_and_a_moved_checkout_builds_the_same_bundle(tmp_path: Path):
    """`path = "../skills"` in conf/skills.toml: the bundle never shows `conf/../skills`, and the
    same checkout built in another place gives the same bytes."""
    import shutil

    proj = tmp_path / "a" / "proj"
    write_skill(proj, "skills/x")
    (proj / "conf").mkdir()
    (proj / "conf/skills.toml").write_text('[[repositories]]\nname = "team"\ntype = "filesystem"\npath = "../skills"\n')
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}

    def build(cwd: Path, config: str, out: Path, *paths: str) -> list[str]:
        r = run_skillc("build", *paths, "--config", config, "--out", str(out), "--no-site", cwd=cwd, env=env)
        assert r.returncode == 0, r.stderr
        return [i["location"] for i in json.loads((out / "api/manifest.json").read_text())["inputs"]]

    def tree(out: Path) -> dict[str, bytes]:
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    assert build(proj, "conf/skills.toml", tmp_path / "o1") == ["skills"]
    # outside the build folder a location is shown from it, normalised: never the machine's whole path
    assert build(proj / "conf", "skills.toml", tmp_path / "o2") == ["../skills"]
    assert build(proj / "conf", "skills.toml", tmp_path / "o3", "../skills") == ["../skills"]
    assert build(proj / "conf", "skills.toml", tmp_path / "o5", str(proj / "skills")) == ["../skills"]
    moved = tmp_path / "b" / "elsewhere"
    shutil.copytree(proj, moved)
    build(moved, "conf/skills.toml", tmp_path / "o4")
    assert tree(tmp_path / "o1") == tree(tmp_path / "o4")


def test_a_sibling_repository_names_the_same_wherever_the_checkout_lives(tmp_path):
    """`skillc build ../repo` from two checkouts of one layout: the same skills, lists and indexes
    byte for byte, the manifest too (the name and the location are the normalised relative path,
    never a machine's whole path)."""
    import filecmp

    from conftest import run_skillc, write_skill

    outs = []
    for place in ("a", "b"):
        write_skill(tmp_path / place / "repo", "tools/x")
        (tmp_path / place / "work").mkdir()
        r = run_skillc("build", "../repo/./", "--out", "out", "--no-site", cwd=tmp_path / place / "work",
                       env={"SKILLC_CACHE_DIR": str(tmp_path / place / "cache"), "SOURCE_DATE_EPOCH": "1"})
        assert r.returncode == 0, r.stderr
        outs.append(tmp_path / place / "work/out")
    skills = (outs[0] / "api/skills.json").read_text()
    assert '"skillc.repository":"../repo"' in skills and str(tmp_path) not in skills
    files = sorted(p.relative_to(outs[0]).as_posix() for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]).as_posix() for p in outs[1].rglob("*") if p.is_file())
    differ = [f for f in files if not filecmp.cmp(outs[0] / f, outs[1] / f, shallow=False)]
    assert differ == [], differ
    assert '"location":"../repo"' in (outs[0] / "api/manifest.json").read_text()


# ---------------------------------------------------------------- hostile configuration files

REPO = '[[repositories]]\nname = "p"\ntype = "filesystem"\npath = "skills"\n'


@pytest.mark.parametrize("name, text, where", [
    ("skills.toml", REPO + "priority = 250.0\n", ":5:"),
    ("skills.toml", "max_injection_bytes = 1.0\n" + REPO, ":1:"),
    ("external-skills.json", '{"sources": {"b": {"type": "builtin", "path": "b"}},\n'
     ' "skills": {"x": {"source": "b", "skill_path": "x",\n  "priority": 30.0}}}', ":3:"),
], ids=["toml-priority", "toml-setting", "json-priority"])
def test_a_float_is_not_an_integer(tmp_path, proj, name, text, where):
    """JSON Schema counts 250.0 as an integer; TOML and JSON do not, and it was published as 250.0."""
    (proj / "b" / "x").mkdir(parents=True)
    (proj / name).write_text(text)
    with pytest.raises(ConfigError, match="is not of type 'integer'") as exc:
        load(tmp_path)
    assert f"{name}{where}" in str(exc.value)


@pytest.mark.parametrize("rtype", ["git", "zip"])
def test_a_url_that_expands_to_nothing_is_an_error(tmp_path, proj, rtype):
    """`url = "${REPO}"` with REPO set but empty: a git url "" read as the config's own folder."""
    (proj / "skills.toml").write_text(f'[[repositories]]\nname = "g"\ntype = "{rtype}"\nurl = "${{REPO}}"\n')
    with pytest.raises(ConfigError, match=r"skills.toml:4: repository 'g': url '\$\{REPO\}' is empty") as exc:
        load(tmp_path, env={"REPO": ""})
    assert exc.value.exit_code == 2


def test_a_missing_plan_cascade_skill_folder_names_the_file_and_line(tmp_path, proj):
    """The repository is the folder above the skill: a missing skill folder only made it "offer no
    skill" (a warning naming that other folder) and the build succeeded without the skill."""
    (proj / "bi" / "python").mkdir(parents=True)
    (proj / "external-skills.json").write_text(
        '{"sources": {"builtin": {"type": "builtin", "path": "bi"},\n'
        '             "vercel": {"type": "submodule", "path": "ext/vercel"}},\n'
        ' "skills": {"python": {"source": "builtin", "skill_path": "python"},\n'
        '            "go": {"source": "builtin", "skill_path": "go"}}}')
    with pytest.raises(ConfigError, match=r"external-skills.json:4: skill 'go': .*bi/go is not a directory") as exc:
        load(tmp_path)
    assert exc.value.exit_code == 1
    (proj / "external-skills.json").unlink()
    (proj / ".plan-cascade").mkdir()
    (proj / ".plan-cascade" / "skills.json").write_text('{"skills": [\n {"name": "mine", "path": "../gone"}]}')
    with pytest.raises(ConfigError, match=r"skills.json:2: skill 'mine': .*gone is not a directory"):
        load(tmp_path)


def test_toml_bom_crlf_and_bad_bytes(tmp_path, proj):
    """A BOM (Meerkat's parser skips it) is read; the manifest's hash is the file's own bytes (CRLF
    kept); a syntax error and a byte that is not UTF-8 read path:line:column: first."""
    import hashlib

    raw = ("\ufeff" + REPO).replace("\n", "\r\n").encode("utf-8")
    (proj / "skills.toml").write_bytes(raw)
    cfg = load(tmp_path)
    assert [r.name for r in cfg.repositories] == ["p"]
    assert cfg.config_files == ((str(proj / "skills.toml"), hashlib.sha256(raw).hexdigest()),)
    (proj / "skills.toml").write_bytes(REPO.encode() + b'priority = "\xff"\n')
    with pytest.raises(ConfigError, match=r"skills.toml:5:13: not UTF-8 \(byte 0xff\)$"):
        load(tmp_path)
    (proj / "skills.toml").write_text(REPO + 'priority = "\n')
    with pytest.raises(ConfigError, match=r"skills.toml:5:13: invalid TOML: Illegal character '\\n'$"):
        load(tmp_path)
    (proj / "skills.toml").write_text(REPO + "[lint")
    with pytest.raises(ConfigError, match=r"skills.toml:5: invalid TOML: Expected ']'"):
        load(tmp_path)


def test_lint_and_memory_errors_name_the_line_in_their_own_table(tmp_path, proj):
    """`profile` in a [search] table (Meerkat's) above [lint] was named as the wrong line."""
    from skillc.config.files import read_config_file
    from skillc.memory.settings import settings_from_config

    (proj / "skills.toml").write_text('enabled = true\n[search]\nprofile = "fast"\n' + REPO +
                                      '[lint]\nprofile = "x"\n[memory]\nenabled = "x"\n')
    with pytest.raises(ConfigError, match=r"skills.toml:9: 'lint.profile'"):
        load(tmp_path)
    with pytest.raises(ConfigError, match=r"skills.toml:11: 'memory.enabled'"):
        settings_from_config(read_config_file(proj / "skills.toml"))
    (proj / "skills.toml").write_text('lint.ignore = 3\n[search]\nignore = []\n' + REPO)
    with pytest.raises(ConfigError, match=r"skills.toml:1: 'lint.ignore'"):
        load(tmp_path)


def test_a_file_found_at_both_levels_is_read_once(tmp_path):
    """Building in the home folder: ./.rkat/skills.toml is ~/.rkat/skills.toml (listed once)."""
    home = tmp_path / "home"
    (home / ".rkat").mkdir(parents=True)
    (home / ".rkat" / "skills.toml").write_text(REPO)
    cfg = load_build_config([], None, cwd=home, home=home, env={})
    assert [r.tier for r in cfg.repositories] == [Tier.PROJECT]
    assert [p for p, _ in cfg.config_files] == [str(home / ".rkat" / "skills.toml")]


def test_config_option_names_a_fifo(tmp_path, proj):
    import os

    os.mkfifo(tmp_path / "fifo.toml")
    with pytest.raises(ConfigError, match="fifo.toml: not a regular file"):
        load(tmp_path, config=str(tmp_path / "fifo.toml"))


def test_a_folder_given_twice_is_built_once(tmp_path):
    """`skillc build skills skills/` reads the folder once, as `skillc lint` does: not a second
    repository `skills#2` shadowing every skill of the first (one R101 line per skill)."""
    from conftest import run_skillc, write_skill

    write_skill(tmp_path / "skills", "pdf")
    write_skill(tmp_path / "skills", "tools/csv")
    r = run_skillc("build", "skills", "skills/", "./skills", "--out", "out", "--no-site", "--json", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["warnings"] == 0 and "R101" not in r.stderr
    assert [i["repository"] for i in json.loads((tmp_path / "out/api/manifest.json").read_text())["inputs"]] == ["skills"]


def test_a_repository_name_holding_a_secret_is_refused(tmp_path, proj):
    # The bundle publishes repository names (every descriptor's skillc.repository, the manifest,
    # the site): one holding a token is refused, and the error shows it redacted.
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    (proj / "skills.toml").write_text(f'[[repositories]]\nname = "{token}"\ntype = "filesystem"\npath = "s"\n')
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    assert "skills.toml:2" in str(exc.value) and "[REDACTED:github-token]" in str(exc.value)
    assert token not in str(exc.value)
    (proj / "skills.toml").unlink()
    (proj / token).mkdir()  # a PATH argument is named by its path
    with pytest.raises(ConfigError, match=r"PATH argument: repository name .*holds a likely secret"):
        load(tmp_path, paths=[str(proj / token)], config=None)


@pytest.mark.parametrize("name", ["skills.toml", ".rkat/skills.toml"])
def test_a_folder_named_like_the_configuration_is_an_error_not_passed_over(tmp_path, name):
    """A folder called skills.toml was passed over: the build quietly fell back to the embedded
    skills and lint to no configuration, exit 0. It is a configuration error naming the path."""
    from conftest import run_skillc, write_skill

    write_skill(tmp_path / "skills", "pdf")
    (tmp_path / name).mkdir(parents=True)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}
    for args in (("build", "--out", "out", "--no-site"), ("lint", "skills")):
        r = run_skillc(*args, cwd=tmp_path, env=env)
        assert r.returncode == 2 and "not a regular file" in r.stderr and name in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["[1]", '""', "5", '["a", ""]'])
def test_a_bad_include_glob_is_named_as_a_glob_not_as_path_or_url(tmp_path, proj, value):
    """include/exclude take one glob or a list of globs (a oneOf in the schema): a bad one was
    reported as "give exactly one of 'path' or 'url'", which sends the user to the wrong keys."""
    (proj / "skills.toml").write_text(REPO + f"include = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load(tmp_path)
    message = str(exc.value)
    assert "skills.toml:5: " in message and "repositories[0].include" in message, message
    assert "'path' or 'url'" not in message and "glob" in message, message


def test_an_error_in_an_inline_repository_table_names_its_line(tmp_path, proj):
    """`repositories = [{ … }, { … }]` is the same TOML as [[repositories]] tables: its errors named
    the file without a line, and a missing path was "declared at skills.toml:0"."""
    (proj / "skills.toml").write_text(
        '# inline tables\n'
        'repositories = [\n'
        '  { name = "a", type = "filesystem", path = "a" },  # a comment with { and "\n'
        '\n'
        '  { name = "b", type = "filesystem", path = "b", priority = 5 },\n'
        ']\n')
    with pytest.raises(ConfigError, match=r"skills.toml:5: repository 'b': priority 5 is outside") as exc:
        load(tmp_path)
    (proj / "skills.toml").write_text('repositories = [\n  { name = "a", type = "git", url = "${NOPE}" },\n]\n')
    with pytest.raises(ConfigError, match=r"skills.toml:2: repository 'a': url: environment variable NOPE") as exc:
        load(tmp_path)
    (proj / "skills.toml").write_text('repositories = [{ name = "a", type = "filesystem", path = "a" },\n'
                                      '  { name = "b", type = "filesystem", path = "b", bogus = 1 }]\n')
    with pytest.raises(ConfigError, match=r"skills.toml:2: unknown key\(s\) in repositories\[1\]: bogus") as exc:
        load(tmp_path)
    (proj / "skills.toml").write_text('repositories = [{ name = "a", type = "filesystem", path = "a" },\n'
                                      '  { name = "b", type = "filesystem", path = "b" }]\n')
    assert [r.config_file for r in load(tmp_path).repositories] == [
        f"{proj / 'skills.toml'}:1", f"{proj / 'skills.toml'}:2"]
    assert exc.value.exit_code == 2
