"""The per-file stage on several cores (``SKILLC_JOBS``) gives exactly the serial result.

Large repositories are linted in forked worker processes whose results come back as plain tuples
(``lint._document_record``); these tests hold that transfer to the serial output: every
diagnostic (line, column, fix) and every parsed document (text, body, frontmatter positions and
written scalar forms).
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.discover.walk import discover
from skillc.validate.lint import PARALLEL_MIN_ITEMS, _document_from_record, _document_record, read_item

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a well-formed GitHub token, split to stay out of scanners

# One of each kind of problem (and clean files), cycled over more skills than the parallel threshold.
VARIANTS: list[tuple[str, str, dict[str, str]]] = [
    ("clean", "---\nname: {n}\ndescription: Does the thing. Use when asked.\n---\n# T\n\nDo it.\n", {}),
    ("crlf-bom", "\ufeff---\r\nname: {n}\r\ndescription: Crlf and bom.\r\n---\r\nBody\r\n", {}),
    ("bad-yaml", "---\nname: {n}\ndescription: a: b\n---\nbody\n", {}),
    ("types", "---\nname: {n}\ndescription: Typed.\nversion: 2.0\ncreated: 2026-01-25\nmetadata:\n  x: [1, yes]\n---\nb\n",
     {}),
    ("dup-key", "---\nname: {n}\nname: other\ndescription: Dup.\n---\nb\n", {}),
    ("no-fm", "# Just a title\n\nNo frontmatter.\n", {}),
    ("unclosed", "---\nname: {n}\ndescription: never closed\n", {}),
    ("tabs", "---\nname: {n}\n\tdescription: tab\n---\nb\n", {}),
    ("conflict", "---\nname: {n}\ndescription: c\n---\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", {}),
    ("links", ("---\nname: {n}\ndescription: Links.\n---\nSee [r](references/r.md), [gone](reference/x.md) and "
               "[up](../other/SKILL.md).\n"), {"references/r.md": "Then [more](more.md).\n",
                                             "references/more.md": "x\n"}),
    ("secret", "---\nname: {n}\ndescription: Secret.\n---\nexport GITHUB_TOKEN=" + GHP + "\n",
     {"scripts/run.sh": "curl -H 'Authorization: token " + GHP + "'\n"}),
    ("same-name", "---\nname: shared-name\ndescription: Same name as others.\n---\nb\n", {}),
    ("upper", "---\nname: Upper-{n}\ndescription: Upper case name.\n---\nb\n", {}),
]


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parallel")
    count = PARALLEL_MIN_ITEMS + 60
    for i in range(count):
        label, text, extra = VARIANTS[i % len(VARIANTS)]
        name = f"{label}-{i:04d}"
        d = root / "skills" / f"group-{i % 7}" / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_bytes(text.format(n=name).encode("utf-8"))
        for rel, content in extra.items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(content)
    (root / "skills" / "group-0" / "binary-9999").mkdir()
    (root / "skills" / "group-0" / "binary-9999" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    write_skill(root, "skills/group-1/plain-9998")
    return root


def test_documents_cross_worker_processes_unchanged(big_repo: Path):
    disc = discover(big_repo)
    assert len(disc.items) > PARALLEL_MIN_ITEMS
    for item in disc.items:
        doc = read_item(disc.root, item)
        back = _document_from_record(pickle.loads(pickle.dumps(_document_record(doc))))
        assert back == doc
        if doc.frontmatter is not None:  # positions and written forms, not only equality of mappings
            assert dict(back.frontmatter.keys.items()) == dict(doc.frontmatter.keys.items())
            assert dict(back.frontmatter.scalars.items()) == dict(doc.frontmatter.scalars.items())


def test_a_summary_made_here_is_what_a_worker_sends(big_repo: Path):
    """This process builds the summaries of the files it checks itself directly (``summary``); a
    worker sends ``_document_record(doc, keys)``: both must be the same document, positions and
    written forms included, or a report would depend on which process checked a file."""
    from skillc.validate.lint import summary

    disc = discover(big_repo)
    keys = frozenset({"name", "description", "metadata"})
    with_frontmatter = 0
    for item in disc.items:
        doc = read_item(disc.root, item)
        here = summary(doc, keys)
        sent = _document_from_record(pickle.loads(pickle.dumps(_document_record(doc, keys))))
        assert here == sent
        if doc.frontmatter is not None:
            with_frontmatter += 1
            assert dict(here.frontmatter.keys.items()) == dict(sent.frontmatter.keys.items())
            assert dict(here.frontmatter.scalars.items()) == dict(sent.frontmatter.scalars.items())
    assert with_frontmatter > 100


def test_parallel_lint_reports_exactly_what_serial_lint_does(big_repo: Path):
    outputs = {}
    for jobs in ("1", "2", "3"):  # this process and one worker, or two workers, share the chunks
        proc = run_skillc("lint", str(big_repo), "--format", "json", "--select", "ALL",
                          env={"SKILLC_JOBS": jobs})
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        outputs[jobs] = json.loads(proc.stdout)
    serial = outputs["1"]
    assert outputs["2"] == serial and outputs["3"] == serial
    found = {d["code"] for d in serial["diagnostics"]}
    # The corpus really exercises parse, link, secret and collection rules on both paths.
    assert {"P204", "P209", "P208", "P201", "P202", "P207", "P205", "P211", "B704", "B705", "B706", "B707",
            "C801"} <= found, sorted(found)


def test_summary_documents_give_the_same_report(big_repo: Path, monkeypatch):
    """``lint_root(documents=False)`` (the report without --fix) keeps only summaries of the documents
    (workers send theirs back so; this process drops its own once checked, so memory does not grow
    with the repository): the collection rules must report exactly what they do on whole documents."""
    from dataclasses import replace

    from skillc.validate.lint import LintConfig, collection_keys, lint_root
    from skillc.validate.rules.registry import LintSettings

    config = LintConfig(select=("ALL",), settings=replace(LintSettings(), description_budget=2_000))
    for jobs in ("1", "2"):
        monkeypatch.setenv("SKILLC_JOBS", jobs)
        whole = lint_root(big_repo, config)
        lean = lint_root(big_repo, config, documents=False)
        assert lean.diagnostics == whole.diagnostics
        assert {"C801", "C802"} <= {d.code for d in lean.diagnostics}
        assert [li.item for li in lean.items] == [li.item for li in whole.items]
        summaries = 0
        for li, full in zip(lean.items, whole.items):
            if li.document == full.document:
                continue  # (an empty file: its summary is itself)
            summaries += 1
            assert li.document.text == "" and li.document.body == ""
            if full.document.frontmatter is None:
                assert li.document.frontmatter is None
                continue
            fm = li.document.frontmatter
            assert set(fm.data) == set(full.document.meta) & {"name", "description"}
            for key in fm.data:
                assert fm.data[key] == full.document.meta[key]
                assert fm.value_position(key) == full.document.frontmatter.value_position(key)
                assert fm.position(key) == full.document.frontmatter.position(key)
        assert summaries > 0 and all(li.document.text == "" for li in lean.items)
    assert collection_keys([r for r in config_rules(config) if r.scope == "collection"]) == {"name", "description"}


def config_rules(config):
    from skillc.validate.lint import active_rules

    return active_rules(config)


def test_discovery_listing_is_what_rules_would_list(big_repo: Path):
    """Rules read a skill's files from discovery's listing; it must equal listing the folder."""
    from skillc.validate.rules.builtin.content import _list_skill

    disc = discover(big_repo)
    listed = [item for item in disc.items if item.listing is not None]
    assert len(listed) == len(disc.items)
    for item in listed:
        files, dirs, links = item.listing
        own = _list_skill(str(big_repo / item.skill_dir))
        assert (frozenset(files) | frozenset(links), frozenset(dirs) | {""}, frozenset(links)) == \
            (own.files, own.dirs, own.links), item.path
    # an exclusion prunes the walk: rules then list the folders themselves
    from skillc.discover.walk import DiscoveryOptions

    assert all(i.listing is None for i in discover(big_repo, DiscoveryOptions(exclude=("**/nothing",))).items)


def test_discovery_listing_of_nested_skills_and_links(tmp_path: Path):
    from skillc.validate.rules.builtin.content import _list_skill

    outer = tmp_path / "outer"
    write_skill(tmp_path, "outer")
    write_skill(tmp_path, "outer/inner")  # a nested skill: listed as a folder, not entered
    (outer / "references").mkdir()
    (outer / "references" / "a.md").write_text("a\n")
    (outer / "node_modules").mkdir()  # skipped
    (outer / "node_modules" / "x.js").write_text("x\n")
    (outer / "link.md").symlink_to("references/a.md")
    (outer / "gone.md").symlink_to("missing.md")
    item = next(i for i in discover(tmp_path).items if i.skill_dir == "outer")
    files, dirs, links = item.listing
    assert files == ("SKILL.md", "references/a.md") and dirs == ("inner", "references")
    assert links == ("gone.md", "link.md")
    own = _list_skill(str(outer))
    assert (own.files, own.dirs, own.links) == (frozenset(files + links), frozenset(dirs + ("",)), frozenset(links))


def test_discovery_hands_over_each_item_once_its_folder_is_walked(tmp_path: Path):
    """``discover(on_item=…)`` (lint checks items while the walk goes on): every item once, a skill
    only with its whole listing, the same items the walk returns (which add their aliases)."""
    write_skill(tmp_path, "a/outer")
    write_skill(tmp_path, "a/outer/inner")
    (tmp_path / "a" / "outer" / "references").mkdir()
    (tmp_path / "a" / "outer" / "references" / "r.md").write_text("r\n")
    write_skill(tmp_path, "b/solo")
    (tmp_path / "CLAUDE.md").write_text("# Conventions\n")
    (tmp_path / ".skills").mkdir()
    (tmp_path / ".skills" / "light.md").write_text("---\nname: light\ndescription: L.\n---\nx\n")
    (tmp_path / "alias").symlink_to("a")
    seen = []
    disc = discover(tmp_path, on_item=seen.append)
    paths = [i.path for i in seen]
    assert sorted(paths) == sorted(i.path for i in disc.items) and len(set(paths)) == len(paths)
    final = {i.path: i for i in disc.items}
    for item in seen:
        assert (item.kind, item.skill_dir, item.file_name, item.listing) == \
            (final[item.path].kind, final[item.path].skill_dir, final[item.path].file_name, final[item.path].listing)
    assert paths.index("a/outer/inner/SKILL.md") < paths.index("a/outer/SKILL.md")  # its folder is done first
    assert final["a/outer/SKILL.md"].listing[0] == ("SKILL.md", "references/r.md")
    assert final["a/outer/SKILL.md"].aliases == ("alias/outer",)


def _wait_for_other_threads(seconds: float = 10) -> None:
    """Lint forks workers only in a process without other threads (forking them can deadlock the
    child); a thread another test left (a cancelled build map's) ends within a second."""
    import threading
    import time

    deadline = time.monotonic() + seconds
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_dead_worker_fails_the_lint_instead_of_hanging(big_repo: Path, monkeypatch):
    import skillc.validate.lint as lint

    parent = os.getpid()
    real = lint._check_chunk

    def dies_in_a_worker(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would
        return real(*args, **kwargs)

    monkeypatch.setattr(lint, "_check_chunk", dies_in_a_worker)
    monkeypatch.setenv("SKILLC_JOBS", "2")
    _wait_for_other_threads()
    from skillc.errors import SkillcError

    with pytest.raises(SkillcError, match="worker process died"):
        lint.lint_root(big_repo)
    monkeypatch.setattr(lint, "_check_chunk", real)
    assert lint.lint_root(big_repo).items  # and the next lint in this process works


# Run in a child process, with a time limit: on failure these would hang, not fail.
_DIES_WHILE_SENDING = """
import os, sys
from multiprocessing import connection
import skillc.validate.lint as lint
from skillc.errors import SkillcError

parent = os.getpid()
real = connection.Connection._send


def send(self, buf, *args):
    if os.getpid() != parent and len(buf) > 4096:  # a chunk's results, from a worker
        real(self, bytes(buf[: len(buf) // 2]), *args)
        os._exit(9)  # killed halfway through the message: the rest never comes
    return real(self, buf, *args)


connection.Connection._send = send
try:
    lint.lint_root(sys.argv[1])
except SkillcError as exc:
    print("error:", exc, "| hint:", exc.hint)
"""

_DIES_HOLDING_THE_CLAIM_LOCK = """
import os, sys
import skillc.validate.lint as lint
from skillc.errors import SkillcError

parent = os.getpid()
real = lint._claim


def claim(claims, *args):
    if os.getpid() != parent:
        claims.get_lock().acquire()
        os._exit(9)  # killed in the moment it held the lock every process claims chunks with
    return real(claims, *args)


lint._claim = claim
try:
    lint.lint_root(sys.argv[1])
except SkillcError as exc:
    print("error:", exc, "| hint:", exc.hint)
"""


@pytest.mark.parametrize("script", [_DIES_WHILE_SENDING, _DIES_HOLDING_THE_CLAIM_LOCK], ids=["sending", "claiming"])
@pytest.mark.parametrize("jobs", ["2", "3"])
def test_a_worker_killed_mid_message_or_holding_a_lock_fails_the_lint(big_repo: Path, script: str, jobs: str):
    """A worker killed while it wrote a chunk's results (a shared queue's write lock held, half a
    message in the pipe) or while it held the claim counter's lock: the lint waited forever (on the
    rest of the message, or on the lock); it must fail with a clear error."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", script, str(big_repo)], env={**os.environ, "SKILLC_JOBS": jobs},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("error: a lint worker process died"), proc.stdout
    assert "SKILLC_JOBS=1" in proc.stdout
