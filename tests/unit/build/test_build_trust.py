"""Builds you can trust: deterministic, atomic, locked, incremental, careful with the output folder."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bundle_contract import build_env, make_sample_repo
from conftest import PROJECT, run_skillc, skillc_command, write_skill


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_same_tree(a: Path, b: Path) -> None:
    ta, tb = tree_bytes(a), tree_bytes(b)
    assert sorted(ta) == sorted(tb)
    differing = [k for k in ta if ta[k] != tb[k]]
    assert not differing, differing


def build_json(tmp: Path, *args: str, cwd: Path | None = None, **env: str) -> dict:
    r = run_skillc("build", *args, "--json", cwd=cwd or tmp, env=build_env(tmp, **env))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_checkout_moved_to_another_folder_builds_the_same_bundle_and_reuses_its_cache(tmp_path: Path):
    """The configuration file's path is not part of the build's identity (config_hash, cache keys)."""
    shared_cache = str(tmp_path / "cache")
    outs = []
    for project in (tmp_path / "a" / "proj", tmp_path / "b" / "deep" / "other"):
        make_sample_repo(project / "skills")
        (project / "skills.toml").write_text('include_embedded = false\n\n[[repositories]]\nname = "team"\n'
                                             'type = "filesystem"\npath = "skills"\n\n[lint]\nignore = ["B704"]\n')
        outs.append((project / "out", build_json(tmp_path, "--out", "out", cwd=project, SKILLC_CACHE_DIR=shared_cache)))
    assert_same_tree(outs[0][0], outs[1][0])
    assert outs[1][1]["linted"] == 0 and outs[1][1]["parsed"] == 0  # its parse and lint records reused


def test_a_locale_in_another_encoding_changes_nothing(tmp_path: Path):
    """Under de_DE in ISO-8859-1, file names are still read as UTF-8 (skillc runs in Python's UTF-8
    mode): the same IDs, paths, links and bundle as under C.UTF-8."""
    locales = tmp_path / "locales"
    locales.mkdir()
    made = subprocess.run(["localedef", "-i", "de_DE", "-f", "ISO-8859-1", str(locales / "de_DE")],
                          capture_output=True, text=True, check=False) if shutil.which("localedef") else None
    if made is None or made.returncode != 0:
        pytest.skip("localedef cannot make an ISO-8859-1 locale here")
    repo = tmp_path / "repo"
    write_skill(repo, "résumé-tools", name="resume-tools", body="See [the notes](références/notes.md).\n")
    (repo / "résumé-tools" / "références").mkdir()
    (repo / "résumé-tools" / "références" / "notes.md").write_text("# Notes\n")
    # (a module in the current folder must never be imported in skillc's place when it runs again)
    (tmp_path / "yaml.py").write_text("import sys\nsys.stderr.write('HIJACKED')\nraise SystemExit(99)\n")
    utf8 = build_json(tmp_path, "repo", "--out", "out-utf8", "--no-site", LC_ALL="C.UTF-8")
    latin = build_json(tmp_path, "repo", "--out", "out-latin", "--no-site", LC_ALL="de_DE", LOCPATH=str(locales))
    assert latin["warnings"] == utf8["warnings"]
    assert_same_tree(tmp_path / "out-utf8", tmp_path / "out-latin")
    manifest = json.loads((tmp_path / "out-latin" / "api" / "manifest.json").read_text())
    assert [s["id"] for s in json.loads((tmp_path / "out-latin" / "api" / "skills.json").read_text())["skills"]] \
        == ["résumé-tools"]
    assert manifest["withheld"][0]["path"] == "références/notes.md"  # (not printable ASCII: withheld, named right)


@pytest.mark.parametrize("closed", [">&-", "2>&-", "<&-"])
def test_a_closed_standard_stream_is_not_an_error(tmp_path: Path, closed: str):
    """`skillc … >&-`: output to the closed stream is dropped, the exit status is the command's own."""
    import shlex

    make_sample_repo(tmp_path / "repo")
    cmd = shlex.join([*skillc_command(), "build", "repo", "--out", "out", "--no-site", "--json"])
    r = subprocess.run(["bash", "-c", f"{cmd} {closed} > out.json" if closed != ">&-" else f"{cmd} {closed}"],
                       cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **build_env(tmp_path)})
    assert r.returncode == 0 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert (tmp_path / "out" / "api" / "manifest.json").is_file()
    if closed != ">&-":
        assert json.loads((tmp_path / "out.json").read_text())["ok"] is True
    rules = subprocess.run(["bash", "-c", f"{shlex.join([*skillc_command(), 'rules'])} {closed}"],
                           capture_output=True, text=True)
    assert rules.returncode == 0 and "Traceback" not in rules.stderr, rules.stderr


def test_a_closed_standard_error_behind_a_wrapper_script(tmp_path: Path):
    """A shell script between the caller and skillc (a pyenv shim, a wrapper) is left open by bash on
    descriptor 2 after `2>&-`, read-only.  It is still a closed stream: the build succeeds (it exited 1
    printing its `Serve it:` line there)."""
    import shlex

    make_sample_repo(tmp_path / "repo")
    wrapper = tmp_path / "skillc-wrapper"
    wrapper.write_text(f"#!/bin/bash\nexec {shlex.join(skillc_command())} \"$@\"\n")
    wrapper.chmod(0o755)
    r = subprocess.run(["bash", "-c", f"{shlex.quote(str(wrapper))} build repo --out out --no-site 2>&-"],
                       cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **build_env(tmp_path)})
    assert r.returncode == 0 and "internal error" not in r.stderr, (r.returncode, r.stderr)
    assert (tmp_path / "out" / "api" / "manifest.json").is_file()


def test_a_full_standard_output_is_one_line_not_an_internal_error():
    """`skillc rules > /dev/full`: the device, not a bug to report (exit 1, as a build on a full disk)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        r = subprocess.run([*skillc_command(), "rules"], stdout=full, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[0] == "skillc: error: cannot write: No space left on device"
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("out", ["my dist", "-dash", "it's"])
def test_the_serve_command_printed_after_a_build_runs_as_shown(tmp_path: Path, out: str):
    import shlex

    make_sample_repo(tmp_path / "repo")
    r = run_skillc("build", "repo", "--out", f"./{out}" if out.startswith("-") else out, "--no-site",
                   cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("Serve it: "))
    words = shlex.split(line.removeprefix("Serve it: "))
    assert words[:2] == ["skillc", "serve"] and len(words) == 3  # (one DIRECTORY, not an option)
    assert not words[2].startswith("-") and (tmp_path / words[2]).resolve() == (tmp_path / out).resolve()


def test_deterministic_whatever_the_order_time_zone_and_locale(tmp_path: Path, monkeypatch):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    make_sample_repo(a / "repo", "forward")
    make_sample_repo(b / "repo", "reverse")
    make_sample_repo(c / "repo", "forward")
    build_json(a, "repo", "--out", "out", cwd=a, TZ="UTC", LC_ALL="C", SKILLC_CACHE_DIR=str(a / "cache"))
    build_json(b, "repo", "--out", "out", cwd=b, TZ="Asia/Kolkata", LC_ALL="C.UTF-8", LANG="de_DE.UTF-8",
               SKILLC_CACHE_DIR=str(b / "cache"))
    assert_same_tree(a / "out", b / "out")

    # In-process, with every directory listing shuffled (discovery, file listing, manifest walk).
    real_scandir = os.scandir
    rng = random.Random(7)

    class Shuffled:
        def __init__(self, path):
            self.entries = list(real_scandir(path))
            rng.shuffle(self.entries)

        def __enter__(self):
            return iter(self.entries)

        def __exit__(self, *exc):
            return False

        def __iter__(self):
            return iter(self.entries)

    from skillc.build.pipeline import BuildOptions, run_build

    monkeypatch.setattr(os, "scandir", Shuffled)
    run_build(BuildOptions(paths=("repo",), out="out", cwd=c, cache_dir=c / "cache",
                           env={"SOURCE_DATE_EPOCH": "1700000000"}))
    monkeypatch.setattr(os, "scandir", real_scandir)
    assert_same_tree(a / "out", c / "out")


def test_incremental_rebuild_processes_only_the_changed_skill(tmp_path: Path):
    repo = tmp_path / "repo"
    for i in range(12):
        write_skill(repo, f"group/skill-{i:02d}")
    first = build_json(tmp_path, "repo", "--out", "out")
    assert (first["parsed"], first["cached"], first["rendered"]) == (12, 0, 12)
    second = build_json(tmp_path, "repo", "--out", "out")
    assert (second["parsed"], second["cached"], second["rendered"], second["linted"]) == (0, 12, 0, 0)
    os.utime(repo / "group/skill-03/SKILL.md", (1, 1))  # touched, same bytes: still cached
    assert build_json(tmp_path, "repo", "--out", "out")["parsed"] == 0
    write_skill(repo, "group/skill-03", body="# Changed\n\nNew body.\n")
    third = build_json(tmp_path, "repo", "--out", "out")
    assert (third["parsed"], third["cached"], third["linted"], third["rendered"], third["render_cached"]) == (1, 11, 1, 1, 11)
    doc = json.loads((tmp_path / "out/api/skills/group%2Fskill-03").read_text())
    assert doc["body"] == "# Changed\n\nNew body.\n"
    # A skill removed is gone from every part of the bundle (the recycled generation is pruned).
    shutil.rmtree(repo / "group/skill-07")
    build_json(tmp_path, "repo", "--out", "out")
    assert not (tmp_path / "out/api/skills/group%2Fskill-07").exists()
    assert not (tmp_path / "out/api/files/group/skill-07").exists()
    # Whatever the history, the bundle equals a fresh build without a cache.
    r = run_skillc("build", "repo", "--out", "fresh", "--no-cache", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert_same_tree(tmp_path / "out", tmp_path / "fresh")


def test_killed_build_leaves_previous_bundle_intact(tmp_path: Path):
    sys.path.insert(0, str(PROJECT / "benchmarks"))
    from synthetic import make_corpus

    make_corpus(tmp_path / "repo", 1500, 3)
    env = {**os.environ, **build_env(tmp_path, SKILLC_CACHE_DIR=str(tmp_path / "cache"))}
    small = tmp_path / "small"
    write_skill(small, "only")
    r = run_skillc("build", "small", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    before = tree_bytes(tmp_path / "out")
    work = tmp_path / ".skillc-build"
    stderr = open(tmp_path / "stderr.txt", "wb")
    proc = subprocess.Popen([*skillc_command(), "build", "repo", "--out", "out", "--no-cache"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        staged = [p for p in work.glob("out.tmp-*") if (p / "api/files").is_dir()]
        if staged and _children(proc.pid):  # publishing, with its worker processes
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the build finished before it could be killed"
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # Its worker processes die with it (they would otherwise go on writing, and print tracebacks).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in workers):
        time.sleep(0.05)
    assert workers and not [pid for pid in workers if os.path.exists(f"/proc/{pid}")]
    stderr.close()
    assert b"Traceback" not in (tmp_path / "stderr.txt").read_bytes()
    assert tree_bytes(tmp_path / "out") == before
    assert list(work.glob("out.tmp-*")), "the killed build left no staging folder (was it killed mid-build?)"
    r = run_skillc("build", "small", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert not list(work.glob("out.tmp-*")), "stale staging folders are cleaned by the next build"


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                out.append(int(entry))
    return out


def _signal_masks(pid: int) -> list[str]:
    """Each thread of ``pid``: its blocked, ignored and pending signal masks (from /proc)."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task")):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if line.startswith(("Sig", "ShdPnd")))
        out.append(f"{tid} blk={fields.get('SigBlk')} ign={fields.get('SigIgn')} pnd={fields.get('SigPnd')} "
                   f"shd={fields.get('ShdPnd')}")
    return out


def test_lock_stops_a_second_build(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    lock = tmp_path / ".skillc-build" / "out.lock"
    lock.parent.mkdir()
    with open(lock, "w") as fh:
        fh.write("4242\n")
        fh.flush()
        fcntl.flock(fh, fcntl.LOCK_EX)
        r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1
    assert "another skillc build (pid 4242) is writing this output" in r.stderr
    assert not (tmp_path / "out").exists()
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr


def test_output_folder_checks(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "one")
    env = build_env(tmp_path)
    r = run_skillc("build", "repo", "--out", "repo/site-out", cwd=tmp_path, env=env)
    assert r.returncode == 1 and "inside input repository" in r.stderr and "Traceback" not in r.stderr
    assert not (repo / "site-out").exists()
    for _ in range(3):  # discovery skips dist/ and .skillc-build/ (the previous bundle lives there)
        r = run_skillc("build", "repo", "--out", "repo/dist", "--json", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["skills"] == 1
    r = run_skillc("build", "repo", "--out", ".", cwd=repo, env=env)
    assert r.returncode == 1 and "contains input repository" in r.stderr
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    r = run_skillc("build", "repo", "--out", "mine", cwd=tmp_path, env=env)
    assert r.returncode == 1 and "--force" in r.stderr
    assert (foreign / "notes.txt").read_text() == "keep me"
    r = run_skillc("build", "repo", "--out", "mine", "--force", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert not (foreign / "notes.txt").exists() and (foreign / "api/manifest.json").is_file()
    (tmp_path / "afile").write_text("x")
    r = run_skillc("build", "repo", "--out", "afile", cwd=tmp_path, env=env)
    assert r.returncode != 0 and "Traceback" not in r.stderr


def test_unsafe_and_colliding_ids_fail_cleanly(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "Tools/x", name="x")
    write_skill(repo, "tools/y", name="y")
    write_skill(repo, "fine")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "R103" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_no_argument_builds_the_embedded_skills_into_dist(tmp_path: Path):
    r = run_skillc("build", "--json", cwd=tmp_path, env=build_env(tmp_path, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "dist/api/manifest.json").read_text())
    assert [i["type"] for i in manifest["inputs"]] == ["embedded"]
    embedded = [p for p in (PROJECT / "skills").rglob("SKILL.md")]
    assert json.loads(r.stdout)["skills"] == len(embedded)


def test_quiet_and_human_output(tmp_path: Path):
    write_skill(tmp_path / "repo", "c/one")  # (one skill in one collection)
    r = run_skillc("build", "repo", "--out", "out", "--quiet", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0 and r.stdout.startswith("Built 1 skill (1 collection, ")  # (singular for one)
    assert "\r" not in r.stderr  # no progress bar when stderr is not a terminal


def _on_a_terminal(args: list[str], cwd: Path, env: dict) -> tuple[int, str]:
    """Run ``args`` with a pseudo-terminal as stdin, stdout and stderr; its exit status and output."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: run the command (never returns)
        try:
            os.chdir(cwd)
            os.execve(args[0], args, {**os.environ, **env, "COLUMNS": "100"})
        finally:
            os._exit(127)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_shows_a_progress_bar_per_stage(tmp_path: Path):
    for i in range(12):
        write_skill(tmp_path / "repo", f"skill-{i:02d}")
    cmd = skillc_command()
    if len(cmd) != 1:
        pytest.skip("needs the installed skillc command")
    code, shown = _on_a_terminal([cmd[0], "build", "repo", "--out", "out", "--no-site"], tmp_path, build_env(tmp_path))
    assert code == 0, shown
    # each stage's bar ends full on a line of its own, before the summary
    finals = [line.rsplit("\r", 1)[-1] for line in shown.replace("\r\n", "\n").split("\n")]
    stages = [next(i for i, line in enumerate(finals) if label in line and "100%" in line)
              for label in ("Reading skills", "Linting skills", "Publishing skills")]
    assert stages == sorted(stages) and len(set(stages)) == 3
    assert any(line.startswith("Built 12 skills") for line in finals[stages[-1]:])
    # a second build has nothing to lint or publish again: only the reading bar
    code, shown = _on_a_terminal([cmd[0], "build", "repo", "--out", "out", "--no-site"], tmp_path, build_env(tmp_path))
    assert code == 0 and "Reading skills" in shown and "Linting skills" not in shown


def test_a_generation_without_skills_is_recycled(tmp_path: Path):
    """The third build recycles the first one's folder; an empty bundle is a sound one too."""
    (tmp_path / "empty").mkdir()
    for _ in range(4):
        r = run_skillc("build", "empty", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
        assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out/api/skills.json").read_text()) == {"skills": []}


def test_an_output_folder_that_is_a_link_is_built_through(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to("real")
    for _ in range(3):
        r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").is_symlink() and os.readlink(tmp_path / "out") == "real"
    assert (tmp_path / "real/api/skills/one.json").is_file()
    # A linked previous generation left by an older skillc is removed, never followed.
    work = tmp_path / ".skillc-build"
    shutil.rmtree(work / "real.prev", ignore_errors=True)
    (work / "real.prev").symlink_to(tmp_path / "real")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "real/api/skills/one.json").is_file()


def test_a_secret_in_a_folder_or_file_name_is_never_published(tmp_path: Path):
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    repo = tmp_path / "repo"
    write_skill(repo, "ok")
    (repo / "ok/references").mkdir()
    (repo / f"ok/references/{token}.md").write_text("notes\n")
    write_skill(repo, token, name="tokdir")
    env = build_env(tmp_path)
    # lint reports both names (B707), redacted as its messages are (issue 17), and the build fails on them
    r = run_skillc("lint", "repo", "--format", "json", cwd=tmp_path, env=env)
    b707 = sorted(d["path"] for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "B707")
    assert b707 == ["[REDACTED:github-token]/SKILL.md", "ok/references/[REDACTED:github-token].md"]
    assert token not in r.stdout + r.stderr
    r = run_skillc("build", "repo", "--out", "out", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 1 and token not in r.stdout + r.stderr
    # --keep-going publishes neither, and no file of the bundle holds the token
    r = run_skillc("build", "repo", "--out", "out", "--keep-going", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 0 and token not in r.stdout + r.stderr
    assert not [p for p, data in tree_bytes(tmp_path / "out").items() if token.encode() in data or token in p]
    # With B707 not selected, the file is still withheld and the skill named after a token excluded.
    (tmp_path / "skills.toml").write_text('[lint]\nselect = ["S"]\n\n[[repositories]]\nname = "repo"\n'
                                          'type = "filesystem"\npath = "repo"\n')
    r = run_skillc("build", "--out", "out2", "--keep-going", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["skills"] == 1 and summary["excluded"] == ["[REDACTED:github-token]"]
    assert not [p for p, data in tree_bytes(tmp_path / "out2").items() if token.encode() in data or token in p]
    withheld = json.loads((tmp_path / "out2/api/manifest.json").read_text())["withheld"]
    assert [w["path"] for w in withheld] == ["references/[REDACTED:github-token].md"]


def test_repository_diagnostics_name_their_repository(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    write_skill(tmp_path / "cased", "Pdf", name="pdf")
    write_skill(tmp_path / "cased", "pdf")
    env = build_env(tmp_path)
    r = run_skillc("build", "empty", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0
    assert [ln for ln in r.stderr.splitlines() if "R107" in ln] == [
        f"empty: R107 repository 'empty' offers no skill: {tmp_path / 'empty'}"]
    r = run_skillc("build", "cased", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 1 and "cased:Pdf/SKILL.md:0:0: R103 " in r.stderr
    r = run_skillc("build", "cased", "--out", "out", "--json", cwd=tmp_path, env=env)
    assert {(d["repository"], d["code"]) for d in json.loads(r.stdout)["diagnostics"]} == {("cased", "R103")}


def test_the_manifest_names_shadowing_sources_relative_to_the_build_folder(tmp_path: Path):
    manifests = []
    for where in ("p1", "p2"):
        for repo in ("a", "b"):
            write_skill(tmp_path / where / repo, "pdf", description=f"From {repo}. Use when asked.")
        r = run_skillc("build", "a", "b", "--out", "out", "--no-site", cwd=tmp_path / where, env=build_env(tmp_path))
        assert r.returncode == 0, r.stderr
        manifests.append((tmp_path / where / "out/api/manifest.json").read_bytes())
    assert manifests[0] == manifests[1]
    shadowing = json.loads(manifests[0])["shadowing"]
    assert [(s["winner_source"], s["loser_source"]) for s in shadowing] == [("a", "b")]
    # the same repositories given as absolute paths: the same bundle (names relative to the build folder)
    where = tmp_path / "p1"
    r = run_skillc("build", str(where / "a"), str(where / "b"), "--out", "abs", "--no-site", cwd=where,
                   env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert tree_bytes(where / "abs") == tree_bytes(where / "out")
    # and the shadowing is told: an R101 line and the count in the summary
    assert "a:pdf/SKILL.md:0:0: R101 skill 'pdf' from repository 'a'" in r.stderr
    assert "; 1 shadowed" in r.stdout


@pytest.mark.parametrize("value, message", [
    ("99999999999999", "after the year 9999"), ("-5", "whole number of seconds"), ("1.5", "whole number")])
def test_source_date_epoch_out_of_range_is_a_usage_error(tmp_path: Path, value: str, message: str):
    write_skill(tmp_path / "repo", "one")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=build_env(tmp_path, SOURCE_DATE_EPOCH=value))
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("lint_table", ['profile = "spec"', 'select = ["S"]', "secret-scan = false",
                                        'per-path-ignores = { "*" = ["B707"] }'])
def test_a_secret_in_skill_md_is_never_published_whatever_lint_selects(tmp_path: Path, lint_table: str):
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    write_skill(tmp_path / "repo", "pdf", body=f"export GITHUB_TOKEN={token}\n")
    write_skill(tmp_path / "repo", "fine")
    (tmp_path / "skills.toml").write_text(f'[lint]\n{lint_table}\n\n[[repositories]]\nname = "repo"\n'
                                          'type = "filesystem"\npath = "repo"\n')
    env = build_env(tmp_path)
    r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 1 and "pdf (SKILL.md holds a likely secret (github-token) at line 5" in r.stderr
    for _ in range(2):  # the second time from the lint cache
        r = run_skillc("build", "--out", "out", "--no-site", "--keep-going", "--json", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["excluded"] == ["pdf"]
        assert not [p for p, data in tree_bytes(tmp_path / "out").items() if token.encode() in data]


def test_a_cache_that_cannot_be_written_never_fails_a_published_build(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    (tmp_path / "afile").write_text("not a folder")
    env = build_env(tmp_path, SKILLC_CACHE_DIR=str(tmp_path / "afile" / "cache"))
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "warning: the build cache could not be saved (Not a directory" in r.stderr
    assert (tmp_path / "out/api/skills/one.json").is_file()


def test_a_cache_record_of_the_wrong_shape_is_rebuilt_not_trusted(tmp_path: Path):
    import pickle

    write_skill(tmp_path / "repo", "one")
    write_skill(tmp_path / "repo", "two")
    env = build_env(tmp_path)
    assert run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env).returncode == 0
    table = tmp_path / "cache/records/lint.pickle"
    salt, token, data = pickle.loads(table.read_bytes())
    table.write_bytes(pickle.dumps((salt, token, dict.fromkeys(data, (1, 2)))))
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0 and "warning: the build cache was unusable (TypeError" in r.stderr, r.stderr
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0 and "warning" not in r.stderr  # the cache was replaced
    fresh = run_skillc("build", "repo", "--out", "fresh", "--no-site", "--no-cache", cwd=tmp_path, env=env)
    assert fresh.returncode == 0
    assert_same_tree(tmp_path / "out", tmp_path / "fresh")


def test_an_output_folder_that_cannot_be_made_is_one_line_and_exit_1(tmp_path: Path):
    write_skill(tmp_path / "repo", "one")
    (tmp_path / "afile").write_text("x")
    r = run_skillc("build", "repo", "--out", "afile/dist", "--json", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 1 and "internal error" not in r.stderr and "Not a directory" in r.stderr
    assert json.loads(r.stdout)["ok"] is False


# Runs argv[1:] with SIGINT at its default and not blocked (the same process: exec).
_AS_A_FOREGROUND_JOB = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); os.execv(sys.argv[1], sys.argv[1:])")


def test_ctrl_c_on_a_terminal_is_one_line(tmp_path: Path):
    """A terminal's Ctrl-C signals the whole process group: workers included."""
    sys.path.insert(0, str(PROJECT / "benchmarks"))
    from synthetic import make_corpus

    make_corpus(tmp_path / "repo", 1500, 5)
    env = {**os.environ, **build_env(tmp_path)}
    # As a terminal's foreground job: SIGINT by default, whatever this process inherited (a test run
    # started in the background by a non-interactive shell, `nox … &`, ignores SIGINT, and so would
    # the build, as POSIX asks of a background job).
    proc = subprocess.Popen([sys.executable, "-c", _AS_A_FOREGROUND_JOB, *skillc_command(), "build", "repo",
                             "--out", "out", "--no-cache", "--no-site"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    work = tmp_path / ".skillc-build"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if [p for p in work.glob("out.tmp-*") if (p / "api/files").is_dir()] and _children(proc.pid):
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    masks = _signal_masks(proc.pid)  # (a failure says how the build held SIGINT: once it ended with 0)
    os.killpg(proc.pid, signal.SIGINT)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.decode().strip() == "Interrupted.", (
        f"exit {proc.returncode} {time.monotonic() - sent:.2f} s after SIGINT; the build's threads then: {masks}; "
        f"stderr: {err.decode()[-1500:]}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [("--bogus",), ("--config", "nope.toml")])
def test_a_usage_error_with_json_is_json_too(tmp_path: Path, args: tuple[str, ...]):
    r = run_skillc("build", "--json", *args, cwd=tmp_path)
    assert r.returncode == 2
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["error"] and doc["failed"] == {} and "Usage:" in r.stderr


def test_keep_going_says_why_each_skill_was_left_out(tmp_path: Path):
    """Also when no lint error says it: a secret B707 was configured not to report."""
    write_skill(tmp_path / "repo", "ok")
    write_skill(tmp_path / "repo", "leak", body="# L\n\ntoken: ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c\n")
    write_skill(tmp_path / "repo", "bad", frontmatter="name: bad\ndescription: Use when: asked\n")
    (tmp_path / "skills.toml").write_text('[[repositories]]\nname = "r"\ntype = "filesystem"\npath = "repo"\n'
                                          '[lint]\nignore = ["B707"]\n')
    r = run_skillc("build", "--out", "out", "--keep-going", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "excluded leak (r's copy): SKILL.md holds a likely secret (github-token) at line 7; never published" in r.stderr
    assert "excluded bad (r's copy): lint errors: P209" in r.stderr and "ghp_" not in r.stderr + r.stdout
    r = run_skillc("build", "--out", "out", "--keep-going", "--no-site", "--json", cwd=tmp_path,
                   env=build_env(tmp_path))
    assert r.returncode == 0 and r.stderr == "" and "ghp_" not in r.stdout, r.stderr
    assert json.loads(r.stdout)["excluded_reasons"] == {
        "bad": "lint errors: P209", "leak": "SKILL.md holds a likely secret (github-token) at line 7; never published"}
    assert json.loads(r.stdout)["excluded_from"] == {"bad": "r", "leak": "r"}


def test_build_and_lint_agree_on_links_into_nested_skills(tmp_path: Path):
    """The build lints what it publishes: a link into a nested skill that holds another nested skill
    resolves, as `skillc lint` finds."""
    write_skill(tmp_path / "s", "p", body="# P\n\nSee [a](a/SKILL.md).\n")
    write_skill(tmp_path / "s", "p/a")
    write_skill(tmp_path / "s", "p/a/b")
    lint = run_skillc("lint", "s", "--format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(lint.stdout)["diagnostics"]] == []
    built = build_json(tmp_path, "s", "--out", "out", "--no-site")
    assert built["warnings"] == 0


def test_keep_going_prints_errors_first_and_quiet_prints_only_them(tmp_path: Path):
    """`--quiet` prints nothing but errors, and the errors of the skills `--keep-going` leaves out are
    errors (a CI job saw nothing while a tenth of a registry was dropped); without it they come
    before the warnings, whatever order the repository gave."""
    write_skill(tmp_path / "repo", "a-warned", body="# A\n\n" + "Line.\n" * 600)  # B701: over 500 lines
    write_skill(tmp_path / "repo", "b-broken", frontmatter="name: b-broken\ndescription: Use when: asked\n")
    write_skill(tmp_path / "repo", "c-warned", body="# C\n\n" + "Line.\n" * 600)
    env = build_env(tmp_path)
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--keep-going", "--quiet", cwd=tmp_path, env=env)
    assert r.returncode == 0 and r.stdout == "", r.stdout
    assert [line.split(" ")[1] for line in r.stderr.splitlines()] == ["P209"], r.stderr
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--keep-going", cwd=tmp_path, env=env)
    codes = [line.split(" ")[1] for line in r.stderr.splitlines() if line.startswith("repo:")]
    assert codes[0] == "P209" and codes.count("B701") == 2 and len(codes) == 3, r.stderr


def test_the_home_and_current_folders_are_never_replaced_even_with_force(tmp_path: Path):
    """`--out ~` (a HOME the shell expanded), `--out .`, `--out ..`, `--out /`: a build swaps its
    output whole, so the folder would be deleted with everything in it. --force vouches that the
    output holds nothing the user wants; it must not reach these."""
    home = tmp_path / "home"
    work = home / "work"
    work.mkdir(parents=True)
    (home / ".profile").write_text("keep me")
    (work / "notes.txt").write_text("keep me too")
    env = {**build_env(tmp_path), "HOME": str(home)}
    for out in (str(home), ".", "..", "/"):
        r = run_skillc("build", "--out", out, "--force", "--no-site", cwd=work, env=env)
        assert r.returncode == 1, (out, r.stdout, r.stderr)
        # (`/` holds the embedded skills too, which is said first)
        assert ("never writes there" in r.stderr or out == "/") and "Traceback" not in r.stderr
    assert (home / ".profile").read_text() == "keep me" and (work / "notes.txt").read_text() == "keep me too"
    assert sorted(p.name for p in home.iterdir()) == [".profile", "work"]
    r = run_skillc("build", "--out", "dist", "--no-site", cwd=work, env=env)  # a folder of its own: fine
    assert r.returncode == 0, r.stderr


def test_bundle_modes_do_not_follow_the_users_umask(tmp_path: Path):
    """Under umask 077 every file was 0600 (a web server running as another user could not read a
    bundle copied with its modes); under 002 one bundle mixed 0644 and 0664. The published files are
    0644 (folders 0755) whoever builds; the cache keeps the user's umask."""
    repo = tmp_path / "repo"
    write_skill(repo, "tools/pdf")
    (repo / "tools/pdf/scripts").mkdir()
    (repo / "tools/pdf/scripts/run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "tools/pdf/scripts/run.sh").chmod(0o755)

    def modes(umask: int, out: str) -> dict[str, int]:
        r = subprocess.run([*skillc_command(), "build", "repo", "--out", out, "--no-site"], cwd=tmp_path,
                           env={**build_env(tmp_path), "SKILLC_CACHE_DIR": str(tmp_path / f"cache{umask:o}")},
                           capture_output=True, text=True, preexec_fn=lambda: os.umask(umask))
        assert r.returncode == 0, r.stderr
        root = tmp_path / out
        return {p.relative_to(root).as_posix(): p.stat().st_mode & 0o777 for p in [root, *root.rglob("*")]}

    public = modes(0o022, "o022")
    assert public["."] == 0o755 and public["api/manifest.json"] == 0o644
    assert set(public.values()) == {0o644, 0o755}  # (a script's x bit is in the manifest and its zip entry)
    assert modes(0o077, "o077") == public and modes(0o002, "o002") == public
    assert all(p.stat().st_mode & 0o077 == 0 for p in (tmp_path / "cache77").rglob("*") if p.is_file())


@pytest.mark.parametrize("value", ["²", "١٢٣"])
def test_a_source_date_epoch_of_other_digits_is_refused_by_name(tmp_path: Path, value: str):
    """str.isdigit() takes superscripts and Arabic-Indic digits: "²" was an internal error, "١٢٣" read as 123."""
    write_skill(tmp_path / "repo", "one")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={**build_env(tmp_path), "SOURCE_DATE_EPOCH": value})
    assert r.returncode == 2 and "SOURCE_DATE_EPOCH must be a whole number" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_a_secret_in_a_skill_name_or_collection_description_is_never_printed_or_published(tmp_path: Path):
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    repo = tmp_path / "repo"
    write_skill(repo, "team/pdf", name=token)  # S304's suggestion was the token lower-cased
    write_skill(repo, "team/ok")
    (repo / "team/COLLECTION.md").write_text(f"# Team\n\nDeploy with {token}\n")  # no skill: only redacted
    env = build_env(tmp_path)
    r = run_skillc("build", "repo", "--out", "out", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 1 and token[4:].lower() not in (r.stdout + r.stderr).lower()
    r = run_skillc("build", "repo", "--out", "out", "--keep-going", "--json", cwd=tmp_path, env=env)
    assert r.returncode == 0 and token[4:].lower() not in (r.stdout + r.stderr).lower()
    leaks = [p for p, data in tree_bytes(tmp_path / "out").items() if token[4:].lower().encode() in data.lower()]
    assert not leaks
    collections = json.loads((tmp_path / "out/api/skill-collections.json").read_text())["collections"]
    assert collections == [{"path": "team", "description": "Deploy with [REDACTED:github-token]", "count": 1}]


def test_a_git_file_in_a_skill_is_withheld_not_published(tmp_path: Path):
    """A submodule's `.git` pointer (`gitdir: …`): git run where a client unpacks the skill would
    follow it to a folder whose config can run commands. The bundle withholds it, as import skips it."""
    repo = tmp_path / "repo"
    write_skill(repo, "tools", name="tools")
    (repo / "tools" / ".git").write_text("gitdir: references/g\n")
    build_json(tmp_path, "repo", "--out", "out", "--no-site")
    manifest = json.loads((tmp_path / "out" / "api" / "manifest.json").read_text())
    assert [(w["path"], w["reason"]) for w in manifest["withheld"]] == [(".git", "a .git file (git would follow it); not published")]
    assert not list((tmp_path / "out").rglob(".git"))


def test_a_folder_laid_out_as_a_git_repository_is_withheld(tmp_path: Path):
    """HEAD, objects/ and refs/ in a skill's folder: git run where a client unpacks it reads its
    config (core.fsmonitor runs commands). Its files are withheld; the skill's other files are not."""
    repo = tmp_path / "repo"
    write_skill(repo, "tools", name="tools")
    g = repo / "tools" / "references" / "g"
    for rel, text in (("HEAD", "ref: refs/heads/main\n"), ("config", "[core]\n\tfsmonitor = touch PWNED\n"),
                      ("objects/info/x", "x\n"), ("refs/heads/main", "0" * 40 + "\n")):
        (g / rel).parent.mkdir(parents=True, exist_ok=True)
        (g / rel).write_text(text)
    (repo / "tools" / "references" / "notes.md").write_text("# Notes\n")
    build_json(tmp_path, "repo", "--out", "out", "--no-site")
    manifest = json.loads((tmp_path / "out" / "api" / "manifest.json").read_text())
    assert sorted(w["path"] for w in manifest["withheld"]) == [
        "references/g/HEAD", "references/g/config", "references/g/objects/info/x", "references/g/refs/heads/main"]
    assert (tmp_path / "out" / "api" / "files" / "tools" / "references" / "notes.md").is_file()
    assert not (tmp_path / "out" / "api" / "files" / "tools" / "references" / "g").exists()
