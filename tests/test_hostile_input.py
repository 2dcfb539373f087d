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

from conftest import run_skillc, skillc_command, write_skill


def needs_mkdocs() -> None:
    from skillc.site import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def _env(tmp: Path, **more: str) -> dict[str, str]:
    return {"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000", **more}


# --- site pages rendered within bounds ----------------------------------------------------------

NESTED = "".join("    " * i + "- level\n" for i in range(250))


def test_fence_cannot_be_closed_by_the_text():
    from skillc.site.bounded import fence

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
    for name, reason in (("deep", "RecursionError"), ("brackets", "over 10 s"), ("brackets-64k", "over 10 s")):
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


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_kill_9_of_a_build_leaves_no_mkdocs_child(tmp_path: Path):
    needs_mkdocs()
    repo = tmp_path / "repo"
    body = "\n".join(f"## Part {i}\n\n- step one of {i}\n- step two\n\n`code {i}`\n" for i in range(40))
    for i in range(400):
        write_skill(repo, f"c{i % 8}/skill-{i:03d}", body=body)
    proc = subprocess.Popen([*skillc_command(), "build", "repo", "--out", "out", "--no-cache"], cwd=tmp_path,
                            env={**os.environ, **_env(tmp_path)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        mkdocs: list[int] = []
        deadline = time.monotonic() + 300
        while not mkdocs and proc.poll() is None and time.monotonic() < deadline:
            mkdocs = [c for c in _children(proc.pid) if "mkdocs" in _cmdline(c)]
            time.sleep(0.05)
        assert mkdocs, "the build ended before mkdocs was seen"
        every = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 60
        while any(_alive(c) for c in every) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [c for c in every if _alive(c)], "a child of the killed build is still running"
        # mkdocs died at once: it did not go on to finish the site (it writes sitemap.xml last); it
        # used to run on re-parented, writing every page, and died only when it logged its success
        # into the closed pipe.
        assert mkdocs[0] in every
        assert not list(tmp_path.glob("**/*.site-*/site/sitemap.xml")), "mkdocs finished the site"
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
