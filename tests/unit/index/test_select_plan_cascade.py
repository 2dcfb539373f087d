"""Plan Cascade detection and seed 000's two-phase selection (research/frameworks.md §3.2-3.3),
through a real build of an external-skills.json configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.index.select import DetectRule, LexicalCandidate, ProjectFiles, detect, for_phase, select

# research §3.1, the rules that matter for the worked examples
RULES = {
    "typescript-best-practices": ("builtin", "typescript", ["tsconfig.json", "package.json"],
                                  ['"typescript"', '"@types/'], ["planning", "implementation", "retry"], 36),
    "python-best-practices": ("builtin", "python", ["pyproject.toml", "requirements.txt"], [],
                              ["planning", "implementation", "retry"], 30),
    "react-best-practices": ("vercel", "skills/react-best-practices", ["package.json"], ['"react"', '"next"'],
                             ["planning", "implementation", "retry"], 100),
    "web-design-guidelines": ("vercel", "skills/web-design-guidelines", ["package.json"],
                              ['"react"', '"vue"', '"svelte"'], ["implementation"], 55),
    "vue-best-practices": ("vue", "skills/vue-best-practices", ["package.json"], ['"vue"', '"nuxt"'],
                           ["planning", "implementation", "retry"], 100),
    "vue-router-best-practices": ("vue", "skills/vue-router-best-practices", ["package.json"], ['"vue-router"'],
                                  ["implementation"], 80),
    "vue-pinia-best-practices": ("vue", "skills/vue-pinia-best-practices", ["package.json"], ['"pinia"'],
                                 ["implementation"], 80),
    "rust-coding-guidelines": ("rust", "skills/coding-guidelines", ["Cargo.toml"], ["[package]"],
                               ["planning", "implementation", "retry"], 100),
    "rust-ownership": ("rust", "skills/m01-ownership", ["Cargo.toml"], ["[package]"], ["implementation", "retry"], 90),
    "rust-error-handling": ("rust", "skills/m06-error-handling", ["Cargo.toml"], ["[package]"],
                           ["implementation", "retry"], 85),
    "rust-concurrency": ("rust", "skills/m07-concurrency", ["Cargo.toml"], ["tokio", "rayon"], ["implementation"], 80),
}


def rules() -> list[DetectRule]:
    return [DetectRule(name, path.rsplit("/", 1)[-1], src, "builtin" if src == "builtin" else "submodule", prio,
                       tuple(files), tuple(pats), tuple(inject))
            for name, (src, path, files, pats, inject, prio) in RULES.items()]


def project(tmp_path: Path, files: dict[str, str]) -> ProjectFiles:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return ProjectFiles(tmp_path)


def names(rs):
    return [r.name for r in rs]


def test_react_typescript_project(tmp_path):
    files = project(tmp_path, {"package.json": '{"dependencies": {"react": "18", "typescript": "5"}}',
                               "tsconfig.json": "{}"})
    top = detect(rules(), files)
    assert names(top) == ["react-best-practices", "web-design-guidelines", "typescript-best-practices"]
    assert names(for_phase(top, "planning")) == ["react-best-practices", "typescript-best-practices"]
    assert names(for_phase(top, "implementation")) == names(top)


def test_vue_project_stable_priority_order_and_phase_after_cut(tmp_path):
    files = project(tmp_path, {"package.json": '{"dependencies": {"vue": "3", "vue-router": "4", "pinia": "2"}}'})
    top = detect(rules(), files)
    assert names(top) == ["vue-best-practices", "vue-router-best-practices", "vue-pinia-best-practices"]
    assert names(for_phase(top, "planning")) == ["vue-best-practices"]  # web-design (55) was cut, not promoted


def test_rust_with_tokio_cuts_concurrency(tmp_path):
    files = project(tmp_path, {"Cargo.toml": '[package]\nname = "x"\n[dependencies]\ntokio = "1"\n'})
    assert names(detect(rules(), files)) == ["rust-coding-guidelines", "rust-ownership", "rust-error-handling"]


def test_python_project_detects_nothing_in_cli_mode_but_does_in_desktop_mode(tmp_path):
    files = project(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert detect(rules(), files) == []
    assert names(detect(rules(), files, mode="desktop")) == ["python-best-practices"]


def test_patterns_are_case_sensitive_substrings_and_files_stay_in_the_project(tmp_path):
    files = project(tmp_path, {"package.json": '{"dependencies": {"React": "18"}}'})
    assert detect(rules(), files) == []
    outside = DetectRule("x", "x", "s", "user", 150, ("../secret.txt", "/etc/hostname"), ("a",))
    (tmp_path.parent / "secret.txt").write_text("a")
    assert detect([outside], ProjectFiles(tmp_path)) == []


def test_detection_reads_only_regular_files_inside_the_project(tmp_path):
    import os

    root = tmp_path / "proj"
    (root / "out").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("root:x:0:0")
    (root / "out/link").symlink_to(tmp_path / "secret.txt")  # a link out of the project
    os.mkfifo(root / "fifo.json")  # opening it would block forever
    rule = DetectRule("x", "x", "s", "user", 150, ("out/link", "fifo.json"), ("root:",))
    assert detect([rule], ProjectFiles(root)) == []
    (root / "inside.txt").write_text("root:here")
    (root / "in-link").symlink_to("inside.txt")  # a link that stays inside is followed
    assert names(detect([DetectRule("y", "y", "s", "user", 150, ("in-link",), ("root:",))], ProjectFiles(root))) == ["y"]


def test_a_file_name_the_system_refuses_is_not_there(tmp_path):
    """A rule's file with a NUL byte or a name over the system's limit (external-skills.json takes
    any string) made ``Path.exists`` raise: selection crashed, even when another file matched."""
    (tmp_path / "package.json").write_text('"react"')
    rule = DetectRule("r", "r", "s", "user", 150, ("a\0b", "n" * 300, "package.json"), ('"react"',))
    files = ProjectFiles(tmp_path)
    assert not files.exists("a\0b") and not files.exists("n" * 300) and files.read("a\0b") is None
    assert names(detect([rule], files)) == ["r"]
    assert names(detect([rule], files, mode="desktop")) == ["r"]


def test_a_cut_inside_a_character_still_matches_the_file(tmp_path):
    from skillc.index.select import MAX_DETECT_FILE_BYTES

    (tmp_path / "big.txt").write_bytes(b"NEEDLE\n" + b"a" * (MAX_DETECT_FILE_BYTES - 8) + "é".encode() + b"tail\n")
    rule = DetectRule("big", "big", "s", "user", 150, ("big.txt",), ("NEEDLE",))
    assert names(detect([rule], ProjectFiles(tmp_path))) == ["big"]


def test_cli_mode_reads_detect_files_with_universal_newlines(tmp_path):
    """Plan Cascade's CLI reads a detect file with ``Path.read_text`` (text mode): CRLF and a lone
    CR are LF, so a pattern spanning a line break matches a CRLF file and one holding "\\r" never
    matches.  The desktop variant reads the bytes as they are."""
    (tmp_path / "Cargo.toml").write_bytes(b'[package]\r\nname = "x"\r\n[dependencies]\r\ntokio = "1"\r')
    lf = DetectRule("lf", "lf", "rust", "submodule", 80, ("Cargo.toml",), ("[dependencies]\ntokio",))
    cr = DetectRule("cr", "cr", "rust", "submodule", 80, ("Cargo.toml",), ('"x"\r',))
    files = ProjectFiles(tmp_path)
    assert names(detect([lf, cr], files)) == ["lf"]
    assert names(detect([lf, cr], files, mode="desktop")) == ["cr"]


def test_desktop_mode_always_and_no_phases_mean_every_phase(tmp_path):
    """Seed 000 §5.5: ``InjectionPhase::Always`` is "all phases"; the desktop variant (select.rs)
    keeps a rule whose ``inject_into`` holds ``always`` or is empty in every phase.  The Python CLI
    only asks ``phase in inject_into``, so there neither is ever injected."""
    (tmp_path / "package.json").write_text('"react"')
    always = DetectRule("always", "always", "s", "user", 150, ("package.json",), ('"react"',), ("always",))
    empty = DetectRule("empty", "empty", "s", "user", 140, ("package.json",), ('"react"',), ())
    files = ProjectFiles(tmp_path)
    assert [s.id for s in select([always, empty], files, [], phase="planning", mode="desktop")] == ["always", "empty"]
    assert select([always, empty], files, [], phase="planning") == []
    assert names(for_phase([always, empty], "retry", mode="desktop")) == ["always", "empty"]


def test_dedup_by_name_keeps_the_higher_priority():
    a = DetectRule("same", "a", "s", "user", 150, ("f",), ("x",))
    b = DetectRule("same", "b", "s", "user", 160, ("f",), ("x",))

    class Files(ProjectFiles):
        def exists(self, rel):
            return True

        def read(self, rel):
            return "x"

    assert [r.id for r in detect([a, b], Files("."))] == ["b"]


def test_two_phase_detected_first_lexical_fills_priority_breaks_ties(tmp_path):
    files = project(tmp_path, {"package.json": '"react"'})
    rs = [r for r in rules() if r.name in ("react-best-practices", "vue-best-practices")]
    lex = [LexicalCandidate("low", "low", 201, "p", "project", 3.0), LexicalCandidate("high", "high", 250, "p",
                                                                                     "project", 3.0),
           LexicalCandidate("best", "best", 201, "p", "project", 4.0),
           LexicalCandidate("vue-best-practices", "vue", 100, "vue", "submodule", 9.0)]  # has a rule: not lexical
    out = select(rs, files, lex, phase="implementation")
    assert [(s.id, s.reason) for s in out] == [("react-best-practices", "detected"), ("best", "lexical"),
                                               ("high", "lexical")]


# --- through a real build ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cascade_bundle(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cascade")
    plugin = root / "plugin"
    ext = {"version": "1.1.0", "sources": {
        "builtin": {"type": "builtin", "path": "builtin-skills"},
        "vercel": {"type": "submodule", "path": "external-skills/vercel"}},
        "skills": {}, "settings": {"max_skills_per_story": 3, "max_content_lines": 3}}
    for name in ("typescript-best-practices", "python-best-practices", "react-best-practices", "web-design-guidelines"):
        src, path, files, pats, inject, prio = RULES[name]
        base = plugin / ("builtin-skills" if src == "builtin" else "external-skills/vercel")
        write_skill(base, path, name=path.rsplit("/", 1)[-1], description=f"{name} guidance. Use for {name}.",
                    body=f"\n# {name}\n\nline one\nline two\nline three\nline four\n")
        ext["skills"][name] = {"source": src, "skill_path": path, "detect": {"files": files, "patterns": pats},
                               "inject_into": inject, "priority": prio}
    (plugin / "external-skills.json").write_text(json.dumps(ext, indent=2))
    app = root / "app"
    app.mkdir()
    (app / "package.json").write_text('{"dependencies": {"react": "18", "typescript": "5"}}')
    proc = run_skillc("build", "--no-site", "--out", str(root / "dist"), cwd=plugin,
                      env={"SOURCE_DATE_EPOCH": "0", "HOME": str(root)})
    assert proc.returncode == 0, proc.stderr
    return root / "dist", app


def test_select_cli_detects_from_the_bundle(cascade_bundle):
    dist, app = cascade_bundle
    proc = run_skillc("select", str(dist), "how should I structure components", "--project", str(app),
                      "--phase", "planning", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(s["name"], s["reason"], s["priority"]) for s in out["selected"]] == [
        ("react-best-practices", "detected", 100), ("typescript-best-practices", "detected", 36)]


def test_select_renders_the_plan_cascade_block(cascade_bundle):
    dist, app = cascade_bundle
    proc = run_skillc("select", str(dist), "x", "--project", str(app), "--phase", "planning", "--render",
                      "plan-cascade")
    assert proc.returncode == 0, proc.stderr
    # 8 lines in each body ("", heading, "", four lines, "" after the final newline): 3 kept, 5 more
    assert proc.stdout == (
        "## Framework-Specific Best Practices\n\n"
        "The following guidelines apply to this project based on detected frameworks:\n\n"
        "### React Best Practices\n*Source: vercel (submodule) | Priority: 100*\n\n"
        "\n# react-best-practices\n\n\n... (5 more lines)\n\n"
        "### Typescript Best Practices\n*Source: builtin (builtin) | Priority: 36*\n\n"
        "\n# typescript-best-practices\n\n\n... (5 more lines)\n"
    )


def test_a_rule_whose_skill_was_shadowed_is_dropped(tmp_path):
    """A user skill (.plan-cascade/skills.json) whose folder has the same name as a vendor's skill
    wins the ID; the vendor's rule no longer names a skill of the bundle: the skill is selected once,
    under the winner's source, and the freed slot goes to the next detected skill."""
    plugin = tmp_path / "plugin"
    ext = {"version": "1.1.0", "sources": {
        "builtin": {"type": "builtin", "path": "builtin-skills"},
        "vercel": {"type": "submodule", "path": "external-skills/vercel"}},
        "skills": {}, "settings": {"max_skills_per_story": 2}}
    for name in ("typescript-best-practices", "react-best-practices"):
        src, path, files, pats, inject, prio = RULES[name]
        base = plugin / ("builtin-skills" if src == "builtin" else "external-skills/vercel")
        write_skill(base, path, name=path.rsplit("/", 1)[-1], description=f"{name} guidance. Use for {name}.")
        ext["skills"][name] = {"source": src, "skill_path": path, "detect": {"files": files, "patterns": pats},
                               "inject_into": inject, "priority": prio}
    (plugin / "external-skills.json").write_text(json.dumps(ext, indent=2))
    write_skill(tmp_path / "my-skills", "react-best-practices", description="Team React rules. Use for React.")
    (plugin / ".plan-cascade").mkdir()
    (plugin / ".plan-cascade/skills.json").write_text(json.dumps({"skills": [
        {"name": "team-react", "path": "../../my-skills/react-best-practices",
         "detect": {"files": ["package.json"], "patterns": ['"react"']}, "priority": 150}]}))
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"dependencies": {"react": "18", "typescript": "5"}}')
    proc = run_skillc("build", "--no-site", "--out", str(tmp_path / "dist"), cwd=plugin, env={"HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    proc = run_skillc("select", str(tmp_path / "dist"), "x", "--project", str(app), "--json")
    assert proc.returncode == 0, proc.stderr
    selected = [(s["id"], s["priority"], s["source"]) for s in json.loads(proc.stdout)["selected"]]
    assert selected == [("react-best-practices", 150, "user-team-react"),
                        ("typescript", 36, "builtin")], selected


def test_the_plan_cascade_block_of_a_crlf_skill_has_no_carriage_returns(tmp_path):
    """Plan Cascade reads SKILL.md in Python's text mode (universal newlines)."""
    d = tmp_path / "repo/geo"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_bytes(b"---\r\nname: geo\r\ndescription: Maps. Use for maps.\r\n---\r\n\r\n# Geo\r\n\r\nline\r\n")
    r = run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    out = run_skillc("render", "dist", "--inject", "geo", "--format", "plan-cascade", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = json.loads(out.stdout)["text"]  # (JSON keeps a "\r" that a text-mode pipe would turn into "\n")
    assert "\r" not in text and "\n# Geo\n\nline\n" in text, repr(text)


def test_a_config_skill_a_user_skill_replaces_is_not_published(tmp_path):
    """A user skill (.plan-cascade/skills.json, priority 101-200) of the same name replaces the
    external-skills.json entry (1-100): Plan Cascade no longer loads that skill, so the bundle does
    not publish it (it was published and selected beside its replacement)."""
    write_skill(tmp_path / "pcskills/builtin", "react-best", description="React best practices. Use for React.")
    write_skill(tmp_path / "pcskills/builtin", "vue-best", description="Vue best practices. Use for Vue.")
    write_skill(tmp_path / ".plan-cascade/mine", "react-user", description="USER react override. Use for React.")
    detect = {"files": ["package.json"], "patterns": ["react"]}
    (tmp_path / "external-skills.json").write_text(json.dumps({
        "sources": {"builtin": {"type": "builtin", "path": "pcskills/builtin"}},
        "skills": {"react": {"source": "builtin", "skill_path": "react-best", "detect": detect, "priority": 30},
                   "vue": {"source": "builtin", "skill_path": "vue-best", "detect": detect, "priority": 30}}}))
    (tmp_path / ".plan-cascade/skills.json").write_text(json.dumps({"skills": [
        {"name": "react", "path": "mine/react-user", "priority": 150, "detect": detect}]}))
    proc = run_skillc("build", "--no-site", "--out", str(tmp_path / "dist"), cwd=tmp_path,
                      env={"HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    published = {s["id"] for s in json.loads((tmp_path / "dist/api/skills.json").read_text())["skills"]}
    assert published == {"react-user", "vue-best"}
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"dependencies": {"react": "18"}}')
    proc = run_skillc("select", str(tmp_path / "dist"), "react best practices", "--project", str(app), "--json")
    assert [s["id"] for s in json.loads(proc.stdout)["selected"]] == ["react-user", "vue-best"]


def test_a_rule_without_a_priority_is_priority_0_as_plan_cascade_reads_it(tmp_path):
    """Plan Cascade's loader sorts and prints `skill.get("priority", 0)`: a rule written without one
    comes after every rule with one, and its block says Priority: 0 (it was the tier's middle, 75
    for a submodule, ranked before typescript's 36)."""
    plugin = tmp_path / "plugin"
    ext = {"version": "1.1.0", "sources": {
        "builtin": {"type": "builtin", "path": "builtin-skills"},
        "vercel": {"type": "submodule", "path": "external-skills/vercel"}},
        "skills": {}, "settings": {"max_skills_per_story": 3, "max_content_lines": 1}}
    for name in ("typescript-best-practices", "react-best-practices", "web-design-guidelines"):
        src, path, files, pats, inject, prio = RULES[name]
        base = plugin / ("builtin-skills" if src == "builtin" else "external-skills/vercel")
        write_skill(base, path, name=path.rsplit("/", 1)[-1], description=f"{name} guidance. Use for {name}.")
        ext["skills"][name] = {"source": src, "skill_path": path, "detect": {"files": files, "patterns": pats},
                               "inject_into": inject}
        if name != "web-design-guidelines":
            ext["skills"][name]["priority"] = prio
    (plugin / "external-skills.json").write_text(json.dumps(ext, indent=2))
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"dependencies": {"react": "18", "typescript": "5"}}')
    proc = run_skillc("build", "--no-site", "--out", str(tmp_path / "dist"), cwd=plugin,
                      env={"SOURCE_DATE_EPOCH": "0", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    proc = run_skillc("select", str(tmp_path / "dist"), "x", "--project", str(app), "--phase", "implementation",
                      "--json")
    assert proc.returncode == 0, proc.stderr
    assert [(s["name"], s["priority"]) for s in json.loads(proc.stdout)["selected"]] == [
        ("react-best-practices", 100), ("typescript-best-practices", 36), ("web-design-guidelines", 0)]
