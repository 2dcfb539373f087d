"""Meerkat v2.0 renderers: exact bytes (research/frameworks.md §1.6-1.9)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillc.emit.render.meerkat import (
    browse_result,
    load_result,
    parse_skill_ref,
    render_injection,
    render_inventory,
    xml_escape,
)
from skillc.resolve_types import Collection

GOLDEN = Path(__file__).parents[2] / "golden_render"


@dataclass(frozen=True)
class S:
    id: str
    description: str
    name: str = ""


def golden(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


def test_xml_escape_order_and_apos():
    assert xml_escape("&lt; <a href=\"x\">it's</a>") == "&amp;lt; &lt;a href=&quot;x&quot;&gt;it&apos;s&lt;/a&gt;"


def test_inventory_flat_exact_bytes():
    skills = [
        S("extraction/email", 'Extract "entities" from e-mails & attachments <fast>'),
        S("formatting/markdown", "Markdown output, it's tidy"),
        S("pdf-processing", "Handle PDFs"),
    ]
    assert render_inventory(skills, [], 12) == golden("meerkat_inventory_flat.xml")


def test_inventory_empty_is_empty_string():
    assert render_inventory([], [Collection("a", "1 skill", 1)], 12) == ""


def test_inventory_collections_above_threshold_top_level_only():
    skills = [S("extraction/email", "x"), S("extraction/medical/diag", "y")] + [
        S(f"formatting/f{i:02d}", "z") for i in range(11)
    ] + [S("root-skill", "invisible in collections mode")]
    collections = [
        Collection("formatting", "11 skills", 11),
        Collection("extraction/medical", "1 skill", 1),  # nested: not listed
        Collection("extraction", "Entity & relationship extraction", 2),
    ]
    assert render_inventory(skills, collections, 12) == golden("meerkat_inventory_collections.xml")


def test_inventory_threshold_boundary():
    twelve = [S(f"c/s{i:02d}", "d") for i in range(12)]
    coll = [Collection("c", "12 skills", 12)]
    assert render_inventory(twelve, coll, 12).startswith("<available_skills>\n  <skill ")
    thirteen = twelve + [S("c/s12", "d")]
    assert render_inventory(thirteen, coll, 12).startswith('<available_skills mode="collections">\n')
    assert render_inventory(thirteen, coll, 13).startswith("<available_skills>\n")


def test_injection_leaves_a_closing_tag_with_a_separator_control_alone():
    """`</skill\\x1c>` is no closing tag for Rust's `\\s*` (U+001C is not White_Space)."""
    assert render_injection("x", "a</skill\x1c>b") == '<skill id="x">\na</skill\x1c>b\n</skill>'
    assert render_injection("x", "a</skill\u00a0>b") == '<skill id="x">\na<\\/skill>b\n</skill>'


def test_injection_escapes_closing_tags_case_and_space_insensitively():
    body = "# Title\n\nNever write </skill> or </SKILL  > or </Skill\n> early.\n"
    assert render_injection("a/b&c", body) == golden("meerkat_injection.xml")


def test_injection_folds_case_as_rusts_regex_does():
    """Rust `(?i)` is simple case folding: long s and the Kelvin sign fold to s and k, but Turkish
    dotted İ and dotless ı are no i (Python's re.IGNORECASE would take them), so those stay."""
    assert render_injection("x", "</\u017fkill></s\u212aill>") == '<skill id="x">\n<\\/skill><\\/skill>\n</skill>'
    assert render_injection("x", "</SK\u0130LL></sk\u0131ll>") == '<skill id="x">\n</SK\u0130LL></sk\u0131ll>\n</skill>'


def test_injection_body_verbatim_and_small_bodies_untouched():
    assert render_injection("x", "") == '<skill id="x">\n\n</skill>'
    assert render_injection("x", "  padded  \n") == '<skill id="x">\n  padded  \n\n</skill>'


def test_injection_cap_exact_length_is_kept():
    head = '<skill id="x">\n'
    tail = "\n</skill>"
    body = "a" * (100 - len(head) - len(tail))
    out = render_injection("x", body, max_bytes=100)
    assert len(out.encode()) == 100 and out.endswith("</skill>")


def test_injection_truncates_at_utf8_boundary():
    head = '<skill id="x">\n'  # 15 bytes
    # target = 40 - 11 = 29 bytes; "é" is 2 bytes: 15 + 6*2 = 27, the 7th "é" would end at 29 exactly
    out = render_injection("x", "é" * 50, max_bytes=40)
    assert out == head + "é" * 7 + "[truncated]"
    assert len(out.encode()) == 40
    # 3-byte characters: 15 + 4*3 = 27, a fifth would end at 30 > 29: cut back to the boundary
    out = render_injection("x", "€" * 50, max_bytes=40)
    assert out == head + "€" * 4 + "[truncated]"
    assert len(out.encode()) == 38


def test_injection_default_cap_is_32_kib():
    out = render_injection("big", "x" * 40000)
    assert len(out.encode()) == 32768 and out.endswith("x[truncated]")


@pytest.mark.parametrize(
    "message, expected",
    [
        ("/pdf-processing hello", ("pdf-processing", "hello")),
        ("/a/b/c rest of the message", ("a/b/c", "rest of the message")),
        ("/pdf-processing", ("pdf-processing", "")),
        ("/ref\nhello", ("ref", "hello")),  # \s+ eats the newline
        ("use /extraction/email for this", None),
        ("/ref hello\nworld", None),  # a second line after the text: no match at all
        ("/ref hello\n", None),  # Rust `$` is the end of the text, not before a final newline
        ("/Upper case", None),
        ("/a//b x", None),
        ("/a_b x", None),
        # Rust's \s is Unicode White_Space, which U+001C..U+001F are not (Python's \s takes them)
        ("/ref\x1chello", None),
        ("/ref \x1f", ("ref", "\x1f")),
        ("/ref\u2003hello", ("ref", "hello")),
    ],
)
def test_skill_ref_regex_semantics(message, expected):
    ref = parse_skill_ref(message)
    assert (None if ref is None else (ref.id, ref.rest)) == expected


def test_browse_listing_and_search_results():
    skills = [
        S("extraction/email", "Extract from emails", "email"),
        S("extraction/medical/diag", "Diagnose", "diag"),
        S("formatting/markdown", "Markdown output", "markdown"),
        S("solo", "Root skill", "solo"),
    ]
    colls = [Collection("extraction", "2 skills", 2), Collection("extraction/medical", "1 skill", 1),
             Collection("formatting", "1 skill", 1)]
    root = browse_result(skills, colls)
    assert root == (
        '{"path":"","skills":[{"description":"Root skill","id":"solo","name":"solo"}],'
        '"subcollections":[{"count":2,"description":"2 skills","path":"extraction"},'
        '{"count":1,"description":"1 skill","path":"formatting"}],"type":"listing"}'
    )
    ext = json.loads(browse_result(skills, colls, path="extraction"))
    assert [s["id"] for s in ext["skills"]] == ["extraction/email"]
    assert [c["path"] for c in ext["subcollections"]] == ["extraction/medical"]
    assert json.loads(browse_result(skills, colls, path="nope")) == {
        "type": "listing", "path": "nope", "subcollections": [], "skills": []}
    found = json.loads(browse_result(skills, colls, path="formatting", query="MARKDOWN"))
    assert found == {"type": "search", "query": "MARKDOWN",
                     "skills": [{"id": "formatting/markdown", "name": "markdown", "description": "Markdown output"}]}


def test_load_result_carries_rendered_block_and_byte_size():
    out = load_result("a/b", "b", "Body é")
    assert out == '{"body":"<skill id=\\"a/b\\">\\nBody é\\n</skill>","byte_size":33,"id":"a/b","name":"b"}'


def test_wire_body_and_injection_read_like_meerkats_filesystem_source(tmp_path: Path):
    """Meerkat's parser drops the newlines after the closing `---` (research/frameworks.md §1): its
    own test fixture, built and injected from the bundle, gives `<skill id="…">\\n# name`."""
    from conftest import run_skillc

    (tmp_path / "repo/extraction/email").mkdir(parents=True)
    (tmp_path / "repo/extraction/email/SKILL.md").write_text(
        "---\nname: email\ndescription: Test skill email\n---\n\n# email\n\nBody.")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "out/api/skills/extraction%2Femail").read_text())
    assert doc["body"] == "# email\n\nBody."
    inject = run_skillc("render", "out", "--inject", "extraction/email", cwd=tmp_path)
    assert inject.returncode == 0, inject.stderr
    assert inject.stdout.startswith('<skill id="extraction/email">\n# email\n\nBody.\n</skill>')
    # The published SKILL.md is the file itself, blank line and all.
    assert (tmp_path / "out/api/files/extraction/email/SKILL.md").read_text().startswith("---\nname: email")


@pytest.mark.parametrize("text, body", [
    # Meerkat cuts after the `\n---` that opens the closing line: the rest of that line stays
    ("---\r\nname: a\r\ndescription: d\r\n---\r\n\r\nBody six.\r\n", "\r\n\r\nBody six.\r\n"),
    ("---\nname: a\ndescription: d\n---   \nBody one.\n", "   \nBody one.\n"),
    ("---\nname: a\ndescription: d\n---\n\n\nBody.", "Body."),
])
def test_wire_body_of_crlf_and_odd_closing_lines_is_meerkats(tmp_path: Path, text: str, body: str):
    from conftest import run_skillc

    (tmp_path / "repo/a").mkdir(parents=True)
    (tmp_path / "repo/a/SKILL.md").write_bytes(text.encode())
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out/api/skills/a").read_text())["body"] == body


def test_injected_ids_keep_the_command_lines_order(tmp_path: Path):
    """`--inject a b --inject c` and `--inject=` forms mixed: rendered in the order given."""
    from conftest import run_skillc, write_skill

    for name in ("alpha", "beta", "gamma"):
        write_skill(tmp_path / "repo", name)
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    for args, order in (
        (["--inject", "gamma", "alpha", "--inject", "beta"], ["gamma", "alpha", "beta"]),
        (["--format", "adk", "--inject=beta", "--inject", "gamma", "alpha"], ["beta", "gamma", "alpha"]),
        (["--inject", "alpha", "--max-chars", "50", "gamma", "--inject", "beta"], ["alpha", "gamma", "beta"]),
    ):
        out = run_skillc("render", "out", *args, "--json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["ids"] == order, args


def test_printed_blocks_keep_escape_sequences(tmp_path: Path):
    """A body or description holding an ANSI escape sequence is injected as it is: click.echo
    strips such sequences when standard output is no terminal, so the printed block (render and
    select --render) lost them while --json kept them."""
    from conftest import run_skillc, write_skill

    write_skill(tmp_path / "repo", "ansi", description='"Colours \\e[31mred\\e[0m. Use when colouring."',
                body="# Ansi\n\nPrint \x1b[31mred\x1b[0m text.\n")
    # (lint refuses a control character written as an escape, P214: ignored, the bundle holds one)
    (tmp_path / "skills.toml").write_text('[lint]\nignore = ["P214"]\n')
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--config", "skills.toml", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    for args in (["render", "out", "--inject", "ansi"], ["render", "out", "--inventory"],
                 ["render", "out", "--to-prompt"], ["render", "out", "--inject", "ansi", "--format", "adk"],
                 ["select", "out", "ansi", "--render", "meerkat"]):
        out = run_skillc(*args, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "\x1b[31mred\x1b[0m" in out.stdout, (args, out.stdout)


def test_a_block_printed_to_a_terminal_shows_escape_sequences_instead_of_running_them(tmp_path: Path):
    """Into a pipe the block is byte for byte (above); on a terminal a skill's text must not drive
    it (set its title, hide lines, move the cursor): its control characters are shown as \\x1b."""
    import os
    import pty
    import subprocess

    from conftest import run_skillc, skillc_command, write_skill

    write_skill(tmp_path / "repo", "ansi", body="# Ansi\n\nPrint \x1b]0;pwned\x07\x1b[31mred\x1b[0m text.\n")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    leader, follower = pty.openpty()
    proc = subprocess.run([*skillc_command(), "render", "out", "--inject", "ansi"], cwd=tmp_path, stdout=follower,
                          stderr=subprocess.PIPE, timeout=60, check=False)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # (the terminal's other end closed: everything is read)
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in shown and b"\\x1b]0;pwned\\x07\\x1b[31mred" in shown, shown


def test_search_and_select_lists_show_control_characters_instead_of_running_them(tmp_path: Path):
    """`skillc search` and `skillc select` print one line per skill from the bundle's data, which is
    untrusted (a registry's URL): a description's escape sequence (a window title, a colour) or line
    break reached the terminal, or broke the one-result-a-line listing, where render shows `\\x1b`."""
    from conftest import run_skillc, write_skill

    write_skill(tmp_path / "repo", "ansi",
                description='"Colours \\e]0;pwned\\a\\e[31mred\\nnext line. Use when colouring."')
    (tmp_path / "skills.toml").write_text('[lint]\nignore = ["P214"]\n')  # (else P214 refuses it)
    r = run_skillc("build", "repo", "--out", "out", "--no-site", "--config", "skills.toml", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    for args in (["search", "out", "colouring"], ["select", "out", "ansi colouring"]):
        out = run_skillc(*args, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert len(lines) == 1 and "ansi" in lines[0] and "\x1b" not in out.stdout and "\x07" not in out.stdout, out.stdout
    listed = run_skillc("search", "out", "colouring", cwd=tmp_path).stdout
    assert "Colours \\x1b]0;pwned\\x07\\x1b[31mred next line." in listed, listed
