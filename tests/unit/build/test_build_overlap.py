"""The docs site built in a forked process beside the other emitters (``pipeline._fork_emitter``), and
the mkdocs child started at the build's start (``build.early.head_start``): the bundle, the errors,
the diagnostics and notes are those of the site built in the build's own process, and no process
outlives the build."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from site_fixture import make_site_repos

EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}
NESTED = "".join("    " * i + "- level\n" for i in range(250))  # (a page shown as plain text: R130)


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def _bundle(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@contextmanager
def _another_thread() -> Iterator[None]:
    """A thread running meanwhile: the build must not fork (``parallel.can_fork``)."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _build(tmp: Path, out: str, how: str, **more):
    """``run_build`` of ``team`` and ``vendor`` into ``tmp/out`` (cache ``tmp/cache-<out>``): the site
    forked (``how="forked"``), or built in this process (``"jobs=1"``, ``"thread"``)."""
    from skillc.build.pipeline import BuildOptions, run_build

    opts = BuildOptions(paths=("team", "vendor"), out=out, cwd=tmp, cache_dir=tmp / f"cache-{out}", env=EPOCH,
                        jobs=1 if how == "jobs=1" else 2, **more)
    if how == "thread":
        with _another_thread():
            result = run_build(opts)
    else:
        result = run_build(opts)
    forked = "emit site (forked)" in result.timings
    assert forked == (how == "forked"), (how, sorted(result.timings))
    return result


def _change(tmp: Path) -> None:
    path = tmp / "team/deploy-helper/SKILL.md"
    path.write_text(path.read_text().replace("Roll out the release", "Roll out the new release"))


@pytest.mark.parametrize("here", ["jobs=1", "thread"])
def test_the_forked_site_publishes_the_bundle_the_site_built_here_does(tmp_path: Path, here: str):
    """Clean builds and rebuilds (a changed skill, a removed one) give byte-identical bundles whether
    the site is forked or built in the build's process, and a rebuild gives a fresh build's bundle."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    _build(tmp_path, "forked", "forked")
    _build(tmp_path, "here", here)
    assert _bundle(tmp_path / "forked") == _bundle(tmp_path / "here")
    assert (tmp_path / "forked/skills/deploy-helper/index.html").is_file()
    for step in (_change, lambda tmp: __import__("shutil").rmtree(tmp / "team/hostile")):
        step(tmp_path)
        _build(tmp_path, "forked", "forked")
        _build(tmp_path, "here", here)
        _build(tmp_path, f"fresh{len(list(tmp_path.glob('fresh*')))}", "forked")
        fresh = _bundle(max(tmp_path.glob("fresh*"), key=lambda p: p.name))
        assert _bundle(tmp_path / "forked") == fresh
        assert _bundle(tmp_path / "here") == fresh
    assert "new release" in (tmp_path / "forked/skills/deploy-helper/index.html").read_text()
    assert not (tmp_path / "forked/skills/hostile").exists()


@pytest.mark.parametrize("how", ["forked", "jobs=1"])
def test_an_error_of_the_site_fails_the_build_with_its_message_and_leaves_the_bundle(
        tmp_path: Path, how: str, monkeypatch):
    """A SkillcError raised by the site (here a bad SKILLC_SITE_URL) is the build's error, with its
    message and hint, wherever the site ran; the previous bundle keeps every byte."""
    needs_mkdocs()
    from skillc.errors import ConfigError

    make_site_repos(tmp_path)
    _build(tmp_path, "out", how)
    before = _bundle(tmp_path / "out")
    _change(tmp_path)
    monkeypatch.setenv("SKILLC_SITE_URL", "ftp://example.com/skills/")
    with pytest.raises(ConfigError) as failed:
        _build(tmp_path, "out", "never")
    assert "SKILLC_SITE_URL must be an http(s) URL" in str(failed.value)
    assert failed.value.hint == "for example SKILLC_SITE_URL=https://acme.github.io/skills/"
    assert _bundle(tmp_path / "out") == before
    assert not [p for p in (tmp_path / ".skillc-build").iterdir() if ".tmp-" in p.name]


def _report(tmp: Path, jobs: str) -> tuple[dict, str]:
    r = run_skillc("build", "repo", "--out", f"out-{jobs}", "--json", cwd=tmp, timeout=600,
                   env={"SKILLC_CACHE_DIR": str(tmp / f"cache-{jobs}"), "SKILLC_JOBS": jobs, **EPOCH})
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    report.pop("seconds", None)
    report.pop("out", None)
    return report, r.stderr


def test_the_sites_diagnostics_and_notes_reach_the_result_and_the_json_report_as_when_built_here(tmp_path: Path):
    """A page shown as plain text (R130) is reported the same way by a forked site, in
    the build's result and in ``skillc build --json``, at the first build and when the site is reused."""
    needs_mkdocs()
    repo = tmp_path / "repo"
    write_skill(repo, "deep", body="\n" + NESTED)
    write_skill(repo, "fine", body="\n# Fine\n")
    from skillc.build.pipeline import BuildOptions, run_build

    results = {}
    for how, jobs in (("forked", 2), ("here", 1)):
        for attempt in ("first", "reused"):
            result = run_build(BuildOptions(paths=("repo",), out=f"out-{how}", cwd=tmp_path, jobs=jobs, env=EPOCH,
                                            cache_dir=tmp_path / f"cache-{how}"))
            assert ("emit site (forked)" in result.timings) == (how == "forked")
            results[how, attempt] = ([(r, d.code, d.path, d.message) for r, d in result.diagnostics], result.notes)
    for attempt in ("first", "reused"):
        diagnostics, notes = results["forked", attempt]
        assert (diagnostics, notes) == results["here", attempt]
        assert [d for d in diagnostics if d[1] == "R130"]
    forked, forked_err = _report(tmp_path, "2")
    here, here_err = _report(tmp_path, "1")
    assert forked == here and forked_err == here_err
    assert forked["warnings"] >= 1  # (R130 is a warning)


def _mkdocs_children() -> list[int]:
    """This process's children running the docs site's mkdocs child (alive, not yet reaped)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and stat[0] != "Z" and b"skillc.emit.docsite.bounded" in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_the_mkdocs_child_started_early_is_stopped_when_the_build_fails_or_reuses_its_site(tmp_path: Path):
    needs_mkdocs()
    from skillc.build.pipeline import BuildOptions, run_build
    from skillc.errors import BuildError

    make_site_repos(tmp_path)
    for _ in range(2):  # (the second build reuses the site: the child is never given its command)
        result = run_build(BuildOptions(paths=("team",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache",
                                        env=EPOCH))
        assert result.files and not _mkdocs_children()
    write_skill(tmp_path / "team", "broken", frontmatter="name: Broken Name\ndescription: x\n")
    with pytest.raises(BuildError):  # (fails in lint, long before the site)
        run_build(BuildOptions(paths=("team",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache", env=EPOCH))
    assert not _mkdocs_children()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_ctrl_c_while_the_forked_site_runs_is_one_line_and_leaves_no_process(tmp_path: Path):
    """A terminal's Ctrl-C reaches the whole process group: the forked site ignores it and the build
    kills it as it unwinds; mkdocs and its page workers stop; nothing is published."""
    import signal
    import subprocess
    import sys
    import time

    from test_build_trust import _AS_A_FOREGROUND_JOB
    from test_hostile_input import _alive, _children, _cmdline

    from conftest import skillc_command

    needs_mkdocs()
    body = "\n".join(f"## Part {i}\n\n- step one of {i}\n- step two\n\n`code {i}`\n" for i in range(40))
    for i in range(300):
        write_skill(tmp_path / "repo", f"c{i % 8}/skill-{i:03d}", body=body)
    env = {**os.environ, "SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SKILLC_JOBS": "2", **EPOCH}
    proc = subprocess.Popen([sys.executable, "-c", _AS_A_FOREGROUND_JOB, *skillc_command(), "build", "repo",
                             "--out", "out"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        seen: list[int] = []
        deadline = time.monotonic() + 300
        while not seen and proc.poll() is None and time.monotonic() < deadline:
            children = _children(proc.pid)
            forked = [c for c in children if _cmdline(c) == _cmdline(proc.pid)]
            workers = [w for c in children if "mkdocs" in _cmdline(c) for w in _children(c)]
            if forked and workers:  # (the site forked and mkdocs rendering its pages)
                seen = children + workers
            time.sleep(0.02)
        assert seen, "the build ended before its forked site and mkdocs' page workers were seen"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and err.decode().strip() == "Interrupted.", err.decode()[-1500:]
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in seen if _alive(p)], "a process of the interrupted build is still running"
        assert not (tmp_path / "out").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_forked_process_using_the_builds_mkdocs_child_sees_how_it_ended(tmp_path: Path):
    """Only the process that started the mkdocs child can wait for it: a forked site that used it
    learns its exit status from the build (``MkdocsChild.relay``), so a failed mkdocs fails the
    build (``Popen.wait`` in the fork would have reported success), and a child the fork stopped
    unused reports its signal."""
    needs_mkdocs()
    from skillc.emit.docsite import run_mkdocs, start_mkdocs, stop_mkdocs
    from skillc.errors import BuildError
    from skillc.parallel import fork_call

    epoch = int(EPOCH["SOURCE_DATE_EPOCH"])
    child = start_mkdocs(epoch)
    try:
        def build_nothing() -> None:
            run_mkdocs(tmp_path / "missing/mkdocs.yml", tmp_path / "site", epoch, child=child)

        running = child.relay(lambda: fork_call(build_nothing, 2))
        assert running is not None
        with pytest.raises(BuildError, match="mkdocs could not build the docs site"):
            running.result()
    finally:
        stop_mkdocs(child)
    assert child.returncode not in (0, None)
    unused = start_mkdocs(epoch)
    try:
        def stop_it() -> int | None:
            stop_mkdocs(unused)  # (as a forked site whose site was reused)
            return unused.returncode

        running = unused.relay(lambda: fork_call(stop_it, 2))
        assert running is not None and running.result() == -15
    finally:
        stop_mkdocs(unused)


@pytest.mark.parametrize("how", ["forked", "jobs=1"])
def test_the_manifest_written_in_two_parts_is_the_one_written_whole(tmp_path: Path, how: str):
    """The manifest's rows below the other emitters' names are listed while the site is built, the
    site's after the join (``manifest_part``): its bytes are those the one-pass formatter writes of
    its document, and its rows every file of the bundle, hashed, in path byte order (a rebuild too)."""
    import hashlib

    from skillc.emit.manifest import manifest_bytes

    needs_mkdocs()
    make_site_repos(tmp_path)
    for step in (lambda tmp: None, _change):
        step(tmp_path)
        _build(tmp_path, "out", how)
        out = tmp_path / "out"
        data = (out / "api/manifest.json").read_bytes()
        doc = json.loads(data)
        assert manifest_bytes(doc) == data
        files = {p: b for p, b in _bundle(out).items() if p != "api/manifest.json"}
        assert [(f["path"], f["sha256"], f["size"]) for f in doc["files"]] == [
            (p, hashlib.sha256(files[p]).hexdigest(), len(files[p])) for p in sorted(files, key=str.encode)]
        assert any(p.startswith("assets/skillc/") and p.endswith(".gz") for p in files)  # (the site's copies)
        assert any(p.startswith("api/index/") and p.endswith(".gz") for p in files)  # (the index's)
