"""`skillc export --target …` consumed by the real clients (issue 19 item 2): npx skills and
openskills from a skills folder (a path, and a file:// git URL), `claude plugin validate --strict`
on the marketplace, npx skills from the well-known tree behind a plain static server; every target
deterministic and behind pack's gates."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bundle_contract import build_env, make_sample_repo
from clients import run_client, tree
from conftest import run_skillc, stop_process, write_skill

pytestmark = pytest.mark.clients

FOLDER_TARGETS = ("skills-folder", "marketplace", "well-known", "shared-folder")
EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A repository with nested collections and supporting files (no credential file: export refuses one)."""
    tmp = tmp_path_factory.mktemp("export")
    ids = make_sample_repo(tmp / "repo")
    (tmp / "repo/scripts-demo/.env").unlink()
    (tmp / "repo/pdf-processing/assets").mkdir()
    (tmp / "repo/pdf-processing/assets/blank.bin").write_bytes(bytes(range(256)) * 4)
    return tmp, ids


def export(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return run_skillc("export", "repo", *args, cwd=tmp, env=build_env(tmp))


def flat_names(tmp: Path, out: Path) -> dict[str, str]:
    r = run_skillc("export", "repo", "--target", "skills-folder", "-o", str(out), "--json", cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["flat_names"]


def check_installed(repo: Path, names: dict[str, str], installed: Path, output: str = "") -> None:
    found = {d.name: {p: b for p, b in tree(d).items() if p != ".openskills.json"} for d in installed.iterdir()}
    assert sorted(found) == sorted(names.values()), output
    for skill_id, name in names.items():
        assert found[name] == tree(repo / skill_id), skill_id


def test_skills_folder_installs_with_npx_skills_and_openskills_from_a_path_and_a_git_url(source, tmp_path):
    tmp, ids = source
    names = flat_names(tmp, tmp_path / "names")
    assert sorted(names) == ids
    r = export(tmp, "--target", "skills-folder", "--git", "-o", str(tmp_path / "shared"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "shared/skills").iterdir()) == sorted(names.values())
    git_url = (tmp_path / "shared").as_uri()
    for label, client, args in (
        ("npx-path", "skills", ["add", str(tmp_path / "shared"), "--skill", "*", "--agent", "claude-code", "-y",
                                "--copy"]),
        ("npx-git", "skills", ["add", git_url, "--skill", "*", "--agent", "claude-code", "-y", "--copy"]),
        ("openskills-path", "openskills", ["install", str(tmp_path / "shared"), "-y"]),
        # (openskills takes a git URL by its ending .git; the repository's own .git folder is one)
        ("openskills-git", "openskills", ["install", git_url + "/.git", "-y"]),
    ):
        work = tmp_path / label
        work.mkdir()
        result = run_client(client, *args, cwd=work, home=work / "home")
        check_installed(tmp / "repo", names, work / ".claude/skills", label + result.stdout + result.stderr)


def test_marketplace_passes_claude_plugin_validate_strict(source, tmp_path):
    tmp, ids = source
    out = tmp_path / "market"
    r = export(tmp, "--target", "marketplace", "-o", str(out), "--name", "team-skills", "--owner", "Team")
    assert r.returncode == 0, r.stderr
    market = json.loads((out / ".claude-plugin/marketplace.json").read_text())
    assert market["name"] == "team-skills" and market["owner"] == {"name": "Team"}
    assert len(market["plugins"]) == len(ids)
    home = tmp_path / "home"
    v = run_client("claude", "plugin", "validate", str(out), "--strict", cwd=tmp_path, home=home, timeout=120)
    assert v.returncode == 0, v.stdout + v.stderr
    for plugin in market["plugins"]:
        folder = out / plugin["source"]
        assert (folder / "README.md").is_file()
        v = run_client("claude", "plugin", "validate", str(folder), "--strict", cwd=tmp_path, home=home, timeout=120)
        assert v.returncode == 0, (plugin["name"], v.stdout + v.stderr)
        skill_id = next(i for i in ids if folder.name == i.rsplit("/", 1)[-1])
        assert tree(folder / "skills" / plugin["name"]) == tree(tmp / "repo" / skill_id)


def test_claude_plugin_validate_refuses_what_export_replaced(source, tmp_path):
    # (the validator is a real check: a plugin name with a slash, what skillc 0.1 would have written, fails)
    tmp, _ = source
    out = tmp_path / "market"
    assert export(tmp, "--target", "marketplace", "-o", str(out)).returncode == 0
    doc = json.loads((out / ".claude-plugin/marketplace.json").read_text())
    doc["plugins"][0]["name"] = "extraction/email"
    (out / ".claude-plugin/marketplace.json").write_text(json.dumps(doc))
    v = run_client("claude", "plugin", "validate", str(out), "--strict", cwd=tmp_path, home=tmp_path / "h", timeout=120)
    assert v.returncode != 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_well_known_tree_installs_from_a_plain_static_server(source, tmp_path):
    tmp, ids = source
    names = flat_names(tmp, tmp_path / "names")
    out = tmp_path / "site"
    r = export(tmp, "--target", "well-known", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == [".well-known"]
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(out)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        work = tmp_path / "project"
        work.mkdir()
        result = run_client("skills", "add", f"http://127.0.0.1:{port}", "--skill", "*", "--agent", "claude-code",
                            "-y", "--copy", cwd=work, home=work / "home")
    finally:
        stop_process(server)
    check_installed(tmp / "repo", names, work / ".claude/skills", result.stdout + result.stderr)


def test_shared_folder_holds_the_three_layers(source, tmp_path):
    tmp, ids = source
    names = flat_names(tmp, tmp_path / "names")
    out = tmp_path / "plugin"
    assert export(tmp, "--target", "shared-folder", "-o", str(out)).returncode == 0
    index = (out / "Skills/skills.md").read_text()
    for skill_id, name in names.items():
        assert tree(out / "Skills" / name) == tree(tmp / "repo" / skill_id)
        assert f"## {name}\n" in index and f"`{name}/SKILL.md`" in index and f"`{skill_id}`" in index
    assert "`scripts-demo/scripts/run.sh`" in index


@pytest.mark.parametrize("target", FOLDER_TARGETS + ("claude", "skill"))
def test_every_target_is_deterministic(source, tmp_path, target):
    tmp, _ = source
    extra = ["--git"] if target == "skills-folder" else []
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}" / ("x.zip" if target in ("claude", "skill") else "x")
        r = export(tmp, "--target", target, "-o", str(out), *extra, "--json")
        assert r.returncode == 0, r.stderr
        outs.append((out, json.loads(r.stdout)))
    (a, ja), (b, jb) = outs
    if a.is_file():
        assert a.read_bytes() == b.read_bytes()
        return
    # (the work trees; the commit IDs below cover what .git holds)
    assert {p: d for p, d in tree(a).items() if not p.startswith(".git/")} == {
        p: d for p, d in tree(b).items() if not p.startswith(".git/")}
    if extra:
        assert ja["commit"] == jb["commit"]


def test_export_from_a_bundle_gives_the_same_skills_folder(source, tmp_path):
    tmp, _ = source
    assert run_skillc("build", "repo", "--out", "bundle", cwd=tmp, env=build_env(tmp)).returncode == 0
    a, b = tmp_path / "from-source", tmp_path / "from-bundle"
    assert export(tmp, "--target", "skills-folder", "-o", str(a)).returncode == 0
    r = run_skillc("export", "bundle", "--target", "skills-folder", "-o", str(b), cwd=tmp, env=build_env(tmp))
    assert r.returncode == 0, r.stderr
    assert tree(a) == tree(b)


@pytest.mark.parametrize("target", FOLDER_TARGETS)
def test_a_likely_secret_refuses_every_target_and_writes_nothing(tmp_path, target):
    write_skill(tmp_path / "repo", "leaky")
    (tmp_path / "repo/leaky/config.py").write_text('GITHUB = "ghp_' + "a1B2" * 9 + '"\n')
    out = tmp_path / "out"
    r = run_skillc("export", "repo", "--target", target, "-o", str(out), cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1 and "github-token" in r.stderr and "a1B2a1B2" not in r.stderr + r.stdout
    assert not out.exists() and not any(p.name.startswith(".out") for p in tmp_path.iterdir())


def test_an_existing_folder_is_never_overwritten(source, tmp_path):
    tmp, _ = source
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = export(tmp, "--target", "skills-folder", "-o", str(out))
    assert r.returncode == 1 and "not an empty folder" in r.stderr and "Traceback" not in r.stderr
    assert tree(out) == {"keep.txt": b"mine"}


def test_marketplace_refuses_a_reserved_name(source, tmp_path):
    tmp, _ = source
    r = export(tmp, "--target", "marketplace", "-o", str(tmp_path / "m"), "--name", "claude-plugins-official")
    assert r.returncode != 0 and "reserved" in r.stderr and not (tmp_path / "m").exists()


def test_target_options_belong_to_their_target(source, tmp_path):
    tmp, _ = source
    r = export(tmp, "--target", "marketplace", "--git", "-o", str(tmp_path / "m"))
    assert r.returncode != 0 and "--git goes with --target skills-folder" in r.stderr
    shutil.rmtree(tmp_path / "m", ignore_errors=True)
