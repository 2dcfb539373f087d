"""Hostile content never breaks or stalls the build (issue 17): site pages rendered within bounds,
children that die with the build, every published format valid for its readers, loaders that turn
any oversized value into a file:line diagnostic."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run_skillc, skillc_command, stop_process, write_skill


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def _env(tmp: Path, **more: str) -> dict[str, str]:
    return {"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000", **more}


# --- site pages rendered within bounds ----------------------------------------------------------

NESTED = "".join("    " * i + "- level\n" for i in range(250))


def test_fence_cannot_be_closed_by_the_text():
    from skillc.emit.docsite.bounded import fence

    text = "~~~\n~~~~~ text\n```\n"
    block = fence(text)
    marker = block.split(" ", 1)[0]
    assert len(marker) == 6 and block.endswith(marker + "\n") and block.count(marker) == 2


def test_hostile_bodies_fall_back_to_plain_text_and_the_rest_is_published(tmp_path: Path):
    """A 250-level list (RecursionError in Python-Markdown: the whole build failed) and 24,000 and
    64 KB of `[` (quadratic: 80 s and minutes) each get a plain page and an R130 warning; the build
    succeeds without --keep-going and every other page is rendered as usual."""
    needs_mkdocs()
    repo = tmp_path / "repo"
    write_skill(repo, "deep", body="\n" + NESTED)
    write_skill(repo, "brackets", body="\n" + "[" * 24_000 + "\n")
    write_skill(repo, "brackets-64k", body="\n" + "[" * 65_536 + "\n")
    write_skill(repo, "fine", body="\n# Fine\n\n- one\n    - two\n\n[a link](https://example.com/)\n")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=_env(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr
    for name, reason in (("deep", "nested too deeply (RecursionError)"), ("brackets", "over 10 s"),
                         ("brackets-64k", "over 10 s")):
        assert f"R130 skill '{name}': its site page could not be rendered within bounds ({reason})" in r.stderr
        page = (tmp_path / "out/skills" / name / "index.html").read_text()
        assert "Shown as plain text" in page
        assert (tmp_path / "out/api/skills" / f"{name}.json").is_file()
    assert "[" * 1000 in (tmp_path / "out/skills/brackets/index.html").read_text()
    assert "- level" in (tmp_path / "out/skills/deep/index.html").read_text()
    fine = (tmp_path / "out/skills/fine/index.html").read_text()
    assert "Shown as plain text" not in fine and '<a href="https://example.com/">a link</a>' in fine
    assert "R130" not in r.stderr.replace("R130 skill 'deep'", "").replace("R130 skill 'brackets", "")
    # A rebuild reuses the site and still reports the pages it shows as text.
    again = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=_env(tmp_path), timeout=600)
    assert again.returncode == 0 and again.stderr.count("R130") == 3, again.stderr


# --- every child dies with the build ------------------------------------------------------------

def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _alive_after_kill_9(proc: subprocess.Popen, pids: list[int]) -> list[int]:
    """``kill -9`` the build, then the processes of ``pids`` still alive a minute later."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def _slow_site_build(tmp_path: Path, skills: int, **env: str) -> subprocess.Popen:
    """``skillc build`` started on ``skills`` skills with long bodies: its site takes seconds."""
    needs_mkdocs()
    repo = tmp_path / "repo"
    body = "\n".join(f"## Part {i}\n\n- step one of {i}\n- step two\n\n`code {i}`\n" for i in range(40))
    for i in range(skills):
        write_skill(repo, f"c{i % 8}/skill-{i:03d}", body=body)
    return subprocess.Popen([*skillc_command(), "build", "repo", "--out", "out", "--no-cache"], cwd=tmp_path,
                            env={**os.environ, **_env(tmp_path, **env)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_kill_9_of_a_build_leaves_no_mkdocs_child(tmp_path: Path):
    proc = _slow_site_build(tmp_path, 400)
    try:
        mkdocs: list[int] = []
        deadline = time.monotonic() + 300
        while not mkdocs and proc.poll() is None and time.monotonic() < deadline:
            mkdocs = [c for c in _children(proc.pid) if "mkdocs" in _cmdline(c)]
            time.sleep(0.05)
        assert mkdocs, "the build ended before mkdocs was seen"
        every = _children(proc.pid)
        assert not _alive_after_kill_9(proc, every), "a child of the killed build is still running"
        # mkdocs died at once: it did not go on to finish the site (it writes sitemap.xml last); it
        # used to run on re-parented, writing every page, and died only when it logged its success
        # into the closed pipe.
        assert mkdocs[0] in every
        assert not list(tmp_path.glob("**/*.site-*/site/sitemap.xml")), "mkdocs finished the site"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_kill_9_of_a_build_stops_the_site_page_workers(tmp_path: Path):
    """The mkdocs child's page workers (``page_workers``: forked by it) and the forked process that
    builds the site die with the build."""
    proc = _slow_site_build(tmp_path, 300, SKILLC_JOBS="2")
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 300
        while not workers and proc.poll() is None and time.monotonic() < deadline:
            for child in _children(proc.pid):
                if "mkdocs" in _cmdline(child):
                    workers = _children(child)
            time.sleep(0.05)
        assert workers, "the build ended before the page workers were seen"
        # The site is built by a forked copy of the build (same command line) meanwhile: it dies too.
        forked = [c for c in _children(proc.pid) if _cmdline(c) == _cmdline(proc.pid)]
        assert forked, "no forked site process beside the build"
        assert not _alive_after_kill_9(proc, workers + forked), "a process of the killed build is still running"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- oversized numbers and nesting: a file:line diagnostic, never an internal error -------------

BIG = "1" * 5000


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": ' + BIG + "}", "an integer of 5,000 digits"),
    ('{"a": -' + BIG + "}", "an integer of 5,000 digits"),
    ('{"a": 1e999}', "a number out of range"),
    ('{"a": NaN}', "NaN is not JSON"),
    ('{"a": -Infinity}', "-Infinity is not JSON"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_load_json_refuses_what_no_published_file_could_hold(text: str, message: str):
    import json

    from skillc.jsonio import load_json

    with pytest.raises(json.JSONDecodeError) as info:
        load_json(text)
    assert message in info.value.msg
    assert load_json(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_memory_jsonl_with_a_5000_digit_integer_is_a_file_line_error_and_keep_going_skips_it(tmp_path: Path):
    write_skill(tmp_path / "repo", "alpha")
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / "notes.jsonl").write_text('{"content": "a fine memory about deploys"}\n'
                                     '{"content": "hostile", "importance": ' + BIG + "}\n")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--memory", "mem", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "mem/notes.jsonl:2: error: malformed JSON line: an integer of 5,000 digits" in r.stderr
    assert "internal error" not in r.stderr
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--memory", "mem", "--keep-going", cwd=tmp_path,
                   env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "mem/notes.jsonl:2: malformed JSON line: an integer of 5,000 digits (the limit is 4,300) (column 38); " \
           "skipped" in r.stderr
    assert "a fine memory about deploys" in (tmp_path / "out/api/memory/snapshot.json").read_text()


def test_skills_toml_with_a_5000_digit_integer_names_its_line(tmp_path: Path):
    write_skill(tmp_path / "repo", "alpha")
    (tmp_path / "skills.toml").write_text(f'[[repositories]]\nname = "a"\ntype = "filesystem"\npath = "repo"\n'
                                          f"priority = {BIG}\n")
    r = run_skillc("build", "--out", "out", "--no-site", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 2 and "internal error" not in r.stderr, r.stderr
    assert "skills.toml:5: invalid TOML: an integer of 5,000 digits (the limit is 4,300)" in r.stderr


# --- every published format valid for its readers -----------------------------------------------

def _hostile_repository(root: Path) -> None:
    escaped = '"Tabs\\tand \\x01 \\x0b \\x1f \\x7f \\x85 \\u2028 \\uFFFE \\uFFFF ]]> </skill> <b>&amp; \\U0001F600. Use when testing."'
    write_skill(root, "ctrl-desc", frontmatter=f"name: ctrl-desc\ndescription: {escaped}\n")
    write_skill(root, "ctrl-meta", frontmatter='name: ctrl-meta\ndescription: "Meta. Use when testing."\n'
                                              'metadata:\n  "k\\x03": "v\\x02"\n')
    write_skill(root, "ctrl-body", body="\nbody \x01 \x0c \x1b[31m red \u202e txet \u2028 \ufeff <script>alert(1)</script>\n")
    write_skill(root, "fine")
    (root / "COLLECTION.md").write_text("Collection \x01 with \x0b controls.\n")


def _check_every_file(out: Path) -> int:
    import json
    import sqlite3
    import xml.etree.ElementTree as ET
    import zipfile

    def strict(text: str):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in published JSON"))

    checked = 0
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        rel = path.relative_to(out).as_posix()
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as zf:
                assert zf.testzip() is None
                for info in zf.infolist():
                    info.filename.encode("utf-8")
            continue
        if path.suffix == ".sqlite":
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
            continue
        if path.suffix in (".bin", ".gz", ".png", ".ico", ".woff", ".woff2") or b"\0" in data[:1024]:
            continue
        text = data.decode("utf-8")  # every text file is UTF-8
        if path.suffix == ".xml":
            ET.fromstring(data)
        elif path.suffix == ".json" or (text[:1] in "{[" and rel.startswith("api/")):
            strict(text)
        checked += 1
    return checked


def test_escaped_control_characters_in_frontmatter_are_p214_errors(tmp_path: Path):
    _hostile_repository(tmp_path / "repo")
    r = run_skillc("lint", "repo", cwd=tmp_path)
    assert r.returncode == 1
    assert "ctrl-desc/SKILL.md:3:14: P214 control character U+0001 written as an escape in description" in r.stdout
    assert "P214 control character U+0002 written as an escape in metadata.k\x03" not in r.stdout
    assert "P214 control character U+0003 written as an escape in a key of metadata" in r.stdout
    assert "P214 control character U+0002 written as an escape in metadata" in r.stdout
    assert "ctrl-body" not in r.stdout  # (a body's controls are text: JSON escapes them)


@pytest.mark.parametrize("site", [False, True])
def test_every_published_file_of_a_hostile_repository_parses(tmp_path: Path, site: bool):
    """With P214 ignored the characters reach the emitters: XML stays well-formed (U+FFFD), JSON
    valid, every text file UTF-8."""
    if site:
        needs_mkdocs()
    _hostile_repository(tmp_path / "repo")
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / "m.jsonl").write_text('{"content": "memory \\u0001 with \\u000b controls \\u2028 and ]]> </skill>"}\n'
                                 '{"content": "second \\u0085 memory \\uffff entry"}\n')
    (tmp_path / "skills.toml").write_text('[lint]\nignore = ["P214"]\n')
    r = run_skillc("build", "repo", "--out", "out", "--config", "skills.toml", "--memory", "mem", "--keep-going",
                   *(() if site else ("--no-site",)), cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert _check_every_file(tmp_path / "out") > 20
    inventory = (tmp_path / "out/api/inventory.xml").read_text()
    assert "\x01" not in inventory and "\ufffd" in inventory


def test_a_file_name_that_is_not_utf8_or_holds_a_control_excludes_its_skill(tmp_path: Path):
    """A supporting file named with a byte that is not UTF-8 was an internal error (UnicodeEncodeError
    writing the skill's JSON); a control character reached every listing of paths."""
    repo = tmp_path / "repo"
    write_skill(repo, "latin")
    (repo / "latin").joinpath("notes").mkdir()
    open(os.path.join(os.fsencode(repo / "latin" / "notes"), b"caf\xe9.md"), "wb").close()
    write_skill(repo, "ctl")
    (repo / "ctl" / "a\x01b.md").write_text("x")
    write_skill(repo, "fine")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    assert "R131 file 'notes/caf\\xe9.md' of skill 'latin' cannot be published: its name is not UTF-8 text" in r.stderr
    assert "R131 file 'a\\x01b.md' of skill 'ctl' cannot be published: its name holds the control character U+0001" \
        in r.stderr
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--keep-going", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out/api/skills/fine.json").is_file() and not (tmp_path / "out/api/skills/latin.json").exists()
    assert _check_every_file(tmp_path / "out") > 5


# --- nothing published runs script in the site's origin on a header-less static host ------------

MARK = "localStorage.setItem('pwned', location.pathname)"
PAYLOADS = {
    "assets/evil.html": f"<!doctype html><title>x</title><script>{MARK}</script>",
    "assets/evil.HTM": f"<script>{MARK}</script>",
    "assets/evil.svg": f'<svg xmlns="http://www.w3.org/2000/svg"><script>{MARK}</script></svg>',
    "assets/evil.xml": f'<html xmlns="http://www.w3.org/1999/xhtml"><script>{MARK}</script></html>',
    "assets/evil.xhtml": f'<html xmlns="http://www.w3.org/1999/xhtml"><body><script>{MARK}</script></body></html>',
    "assets/evil.xsl": f'<html xmlns="http://www.w3.org/1999/xhtml"><script>{MARK}</script></html>',
    "assets/ok.txt": f"<script>{MARK}</script>",
}


def _hostile_site_repository(root: Path) -> None:
    links = "\n".join(f"* [{p}]({p}) ![{p}]({p})" for p in PAYLOADS)
    write_skill(root, "evil", body=f"\n# Evil\n\n{links}\n\n<script>{MARK}</script>\n")
    for rel, text in PAYLOADS.items():
        (root / "evil" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "evil" / rel).write_text(text)
    # api/skills/<id> holds the skill's JSON document: under an ID ending .html it was a page
    write_skill(root, "page.html", name="page-html", body=f"\n<script>{MARK}</script>\n")
    write_skill(root, "fine")


def _goto(browser, url: str) -> None:
    browser.events.clear()
    res = browser.call("Page.navigate", url=url)
    if res.get("errorText"):  # a download (zip, octet-stream): nothing rendered
        return
    browser.wait_event("Page.loadEventFired", timeout=30)


def test_no_published_file_runs_script_on_a_static_host_without_headers(tmp_path: Path):
    import http.server  # noqa: F401  (the host under test: `python -m http.server`)
    import sys

    from contract.test_site_browser import Browser, _need_site_tools

    _need_site_tools()
    _hostile_site_repository(tmp_path / "repo")
    r = run_skillc("build", "repo", "--out", "out", "--keep-going", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert "R104 skill ID 'page.html' is not safe" in r.stderr
    assert not (out / "api/files/evil/assets/evil.html").exists()
    assert (out / "api/files/evil/assets/ok.txt").is_file()
    import zipfile

    with zipfile.ZipFile(out / "api/archives/evil.zip") as zf:  # (kept whole in the skill's zip)
        assert {f"evil/{p}" for p in PAYLOADS} <= set(zf.namelist())
    withheld = {w["path"] for w in __import__("json").loads((out / "api/manifest.json").read_text())["withheld"]}
    assert {p for p in PAYLOADS if p != "assets/ok.txt"} <= withheld
    server = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], cwd=out,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    browser = None
    try:
        line = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
        port = int(line.split(" port ")[1].split()[0])
        base = f"http://127.0.0.1:{port}/"
        browser = Browser(tmp_path / "profile")
        urls = [p.relative_to(out).as_posix() for p in sorted(out.rglob("*"))
                if p.is_file() and not p.relative_to(out).as_posix().startswith("assets/")]
        urls += [f"api/files/evil/{p}" for p in PAYLOADS]  # (the links of the skill's page, published or not)
        for rel in urls:
            _goto(browser, base + rel)
        _goto(browser, base)
        assert browser.js("localStorage.getItem('pwned')") is None, "a published file ran script in the site's origin"
        assert len(urls) > 30
    finally:
        if browser is not None:
            browser.close()
        stop_process(server)


# --- also broken (feature audit) ----------------------------------------------------------------

def test_minimal_docs_page_shows_each_skills_lint_verdict(tmp_path: Path):
    """Without the site extra the page read an option the build never set: every skill was "ok"."""
    repo = tmp_path / "repo"
    write_skill(repo, "warned", frontmatter="name: warned\ndescription: Does the thing. Use when the user asks.\n"
                                            "colour: blue\n")
    write_skill(repo, "clean")
    r = run_skillc("build", "repo", "--out", "out", cwd=tmp_path, env=_env(tmp_path, SKILLC_SITE="minimal"))
    assert r.returncode == 0, r.stderr
    assert "F401" in r.stderr  # (an unknown frontmatter key: a warning)
    page = (tmp_path / "out/index.html").read_text()
    rows = {m.split("</td>")[0]: m for m in page.split('<td><a href="api/files/')[1:]}
    warned = next(v for k, v in rows.items() if k.startswith("warned/"))
    clean = next(v for k, v in rows.items() if k.startswith("clean/"))
    assert '<td class="warning">warning (1 warning)</td>' in warned, warned
    assert '<td class="ok">ok</td>' in clean


def _memory_bundle(tmp_path: Path) -> Path:
    write_skill(tmp_path / "repo", "alpha")
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / "m.yaml").write_text("- content: The staging database is reset every night.\n  type: semantic\n"
                                "- content: Prefer small pull requests for reviews.\n  category: preference\n"
                                "- content: Deployed release 4.2 yesterday afternoon.\n  type: episodic\n"
                                "  episode: {situation: release day, action: deployed, outcome: success}\n")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--memory", "mem", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    return tmp_path / "out"


def test_a_semantic_memory_without_category_is_a_fact_everywhere(tmp_path: Path):
    import json

    out = _memory_bundle(tmp_path)
    prompt = (out / "api/memory/prompt.md").read_text()
    assert "[FACT] The staging database is reset every night." in prompt
    shown = run_skillc("memory", "show", "out", "--category", "fact", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "The staging database is reset every night." in shown.stdout
    assert "Prefer small" not in shown.stdout and "Deployed release" not in shown.stdout
    everything = run_skillc("memory", "show", "out", cwd=tmp_path).stdout
    assert "3 memories" in everything and "1 pref" in everything and "1 fact" in everything, everything
    found = run_skillc("memory", "search", "out", "staging database", "--category", "fact", cwd=tmp_path)
    assert "The staging database is reset every night." in found.stdout, found.stdout + found.stderr
    counts = json.loads((out / "api/memory/snapshot.json").read_text())["counts"]["by_category"]
    assert counts == {"fact": 1, "preference": 1}


def test_no_memory_snapshot_over_http_lists_the_urls_it_tried(tmp_path: Path):
    import sys

    write_skill(tmp_path / "repo", "alpha")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=_env(tmp_path))
    assert r.returncode == 0, r.stderr
    server = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"], cwd=tmp_path / "out",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = int(server.stdout.readline().split(" port ")[1].split()[0])
        for base, tried in ((f"http://127.0.0.1:{port}/api", ["/api/memory/snapshot.json"]),
                            (f"http://127.0.0.1:{port}/", ["/api/memory/snapshot.json", "/memory/snapshot.json",
                                                           "/snapshot.json"])):
            shown = run_skillc("memory", "show", base, cwd=tmp_path)
            assert shown.returncode != 0 and "no memory snapshot" in shown.stderr, shown.stderr
            assert "/api/api/" not in shown.stderr
            listed = shown.stderr.split("looked for ")[1].split(")")[0].split(", ")
            assert [u.split(str(port), 1)[1] for u in listed] == tried, shown.stderr
    finally:
        stop_process(server)
