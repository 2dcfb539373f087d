"""The parse stage: frontmatter framing, positions, byte-exact bodies, types, and hostile input."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.model import DiscoveredItem, ItemKind, Position, Severity
from skillc.parse.document import _FENCE_LINE, MAX_FILE_BYTES, _closing_fence, parse_document
from skillc.validate.lint import read_item
from skillc.validate.rules.loader import load_all
from skillc.validate.rules.registry import RULES

load_all()


def codes(doc) -> list[str]:
    return [d.code for d in doc.diagnostics]


def parse(text: str | bytes, kind: ItemKind = ItemKind.SKILL):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_document(raw, "s/SKILL.md", kind, "s")


# --- positions -----------------------------------------------------------------------------------

NESTED = """---
name: pdf
description: >
  Folded text.
metadata:
  author: me
  nested:
    deep: [a, b]
tags:
  - one
  -   two
---
# Body
"""


def test_every_key_has_its_line_and_column():
    fm = parse(NESTED).frontmatter
    assert fm is not None
    assert fm.keys[("name",)] == Position(2, 1)
    assert fm.keys[("description",)] == Position(3, 1)
    assert fm.keys[("metadata",)] == Position(5, 1)
    assert fm.keys[("metadata", "author")] == Position(6, 3)
    assert fm.keys[("metadata", "nested", "deep")] == Position(8, 5)
    assert fm.keys[("metadata", "nested", "deep", 1)] == Position(8, 15)  # the list item "b"
    assert fm.keys[("tags", 0)] == Position(10, 5)
    assert fm.keys[("tags", 1)] == Position(11, 7)
    assert fm.value_position("name") == Position(2, 7)
    assert fm.scalars[("description",)].style == ">"
    assert fm.data["description"] == "Folded text.\n"
    # A path that does not exist falls back to its nearest parent, then to the opening fence.
    assert fm.position("metadata", "nope") == Position(5, 1)
    assert fm.position("missing") == Position(1, 1)


@pytest.mark.parametrize("prefix,newline", [("", "\n"), ("\ufeff", "\n"), ("", "\r\n"), ("\ufeff", "\r\n")])
def test_positions_are_the_same_with_bom_and_crlf(prefix, newline):
    text = prefix + NESTED.replace("\n", newline)
    fm = parse(text).frontmatter
    assert fm is not None
    assert fm.keys[("metadata", "nested", "deep")] == Position(8, 5)
    assert fm.keys[("tags", 1)] == Position(11, 7)


# --- bodies --------------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "# Title\n\nText.\n",
    "",
    "no trailing newline",
    "\n\n  leading blank lines and --- inside\n---\nmore\n",
    "tabs\tand trailing spaces   \n",
])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_body_is_byte_exact(body, newline, bom):
    body = body.replace("\n", newline)
    text = f"{bom}---{newline}name: s{newline}description: d{newline}---{newline}{body}"
    doc = parse(text)
    assert doc.body == body
    assert doc.body_line == 5
    assert doc.text == text  # what was read, BOM and CRLF included
    assert doc.frontmatter is not None and doc.frontmatter.end_line == 4


def test_body_without_frontmatter_is_the_whole_file():
    doc = parse("# Just markdown\n", ItemKind.CONVENTION)
    assert doc.body == "# Just markdown\n" and doc.frontmatter is None and codes(doc) == []


# --- types and unknown keys ----------------------------------------------------------------------

def test_values_keep_their_written_form_and_unknown_keys_are_kept():
    doc = parse("---\nname: s\ndescription: d\nversion: 2.0\ncreated: 2026-01-25\nx-custom: {a: [1, yes]}\n---\n")
    fm = doc.frontmatter
    assert fm.data["version"] == 2.0 and fm.scalars[("version",)].text == "2.0"
    assert fm.scalars[("version",)].tag == "float"
    assert fm.data["created"] == datetime.date(2026, 1, 25) and fm.scalars[("created",)].tag == "timestamp"
    assert fm.data["x-custom"] == {"a": [1, True]}
    assert fm.scalars[("x-custom", "a", 1)].text == "yes"
    assert fm.scalars[("name",)].style is None  # plain, whichever YAML parser (C or Python) ran


# --- framing diagnostics -------------------------------------------------------------------------

@pytest.mark.parametrize("text,code,line,col", [
    ("# no frontmatter\n", "P201", 1, 1),
    ("\n---\nname: s\n---\n", "P201", 1, 1),
    ("name: s\ndescription: d\n", "P201", 1, 1),
    ("---\nname: s\ndescription: d\n# body\n", "P202", 1, 1),
    ("---\nname: s\n<<<<<<< Updated upstream\ndescription: a\n=======\ndescription: b\n>>>>>>> Stashed\n---\n",
     "P205", 3, 1),
    ("```markdown\n---\nname: s\n---\n```\n", "P206", 1, 1),
    ("---\nname: s\nmetadata:\n\tauthor: me\n---\n", "P207", 4, 1),
    ("---\nname: s\ndescription: a\n  \nname: t\n---\n", "P208", 5, 1),
    ("---\nname: s\ndescription: Use when: asked\n---\n", "P209", 3, 22),
    ("---\n- a\n- b\n---\n", "P210", 2, 1),
    ("---\nname: s\ndescription: formula:\u0080x\n---\n", "P214", 3, 22),
    # (libyaml counts bytes where Python counts characters: the é before it must not move the column)
    ("---\nname: s\ndescription: \"\u00e9\u00e9\"\u0007\n---\n", "P214", 3, 18),
    ("---\nname: s\ndescription: \"" + "\u00e9" * 45 + "\u0080\"\n---\n", "P214", 3, 60),
])
def test_framing_problems_get_a_precise_diagnostic(text, code, line, col):
    doc = parse(text)
    found = [d for d in doc.diagnostics if d.code == code]
    assert found, codes(doc)
    assert (found[0].line, found[0].column) == (line, col)
    assert found[0].path == "s/SKILL.md" and found[0].skill == "s"


@pytest.mark.parametrize("text,line,col", [
    ("---\nname: s\ndescription: Does it.\nUse when asked\nlicense: MIT\n---\n", 4, 1),  # (not at license:)
    ("---\nname: s\ndescription: Does it.\nUse when asked\n---\n", 4, 1),  # (not at the closing fence)
    ("---\nname: s\ndescription: \"Does it.\nlicense: MIT\n---\n", 3, 14),  # the quote left open
    ("---\nname: s\nallowed-tools: [Read, Bash\n---\n", 3, 16),  # the bracket left open
    ("---\nname: s\nmetadata: {a: b\n---\n", 3, 11),
    ("---\nname: s\ndescription: Use when: asked\n---\n", 3, 22),  # (noticed where it is: unchanged)
    ("---\nname: s\ndescription: \"a\\qb\"\n---\n", 3, 16),  # (at the escape: unchanged)
])
def test_a_yaml_error_points_at_the_line_to_fix(text, line, col):
    """libyaml notices a key without `:` on the line after it, and an unclosed quote or bracket at
    the end of the frontmatter: P209 pointed at a valid `license: MIT` or at the closing fence.
    It points where skills-ref's message does, at the key, quote or bracket to fix."""
    (d,) = [d for d in parse(text).diagnostics if d.code == "P209"]
    assert (d.line, d.column) == (line, col), d.message


def test_missing_fences_around_yaml_get_a_hint():
    doc = parse("name: s\ndescription: d\n")
    assert "no '---' fences" in doc.diagnostics[0].message


def test_bom_and_crlf_warn_with_fixes():
    doc = parse("\ufeff---\r\nname: s\r\ndescription: d\r\n---\r\n")
    by = {d.code: d for d in doc.diagnostics}
    assert set(by) == {"P203", "P204"}
    assert by["P203"].severity is Severity.WARNING and by["P203"].fix is not None
    assert len(by["P204"].fix.edits) == 4


def test_old_mac_line_endings_are_line_breaks_with_a_fix():
    doc = parse("---\rname: s\rdescription: d\r---\r# Body\r")
    assert doc.frontmatter is not None and doc.meta["description"] == "d" and doc.body == "# Body\r"
    (d,) = doc.diagnostics
    assert d.code == "P204" and "CR (old Mac)" in d.message and len(d.fix.edits) == 5


def test_a_block_scalar_written_last_keeps_its_final_newline():
    """As in any YAML reader (and skills-ref): the value does not depend on the key order."""
    last = parse("---\nname: s\ndescription: |\n  one\n  two\n---\n")
    first = parse("---\ndescription: |\n  one\n  two\nname: s\n---\n")
    assert last.meta["description"] == first.meta["description"] == "one\ntwo\n"
    keep = parse("---\nname: s\ndescription: |+\n  one\n\n---\n")
    assert keep.meta["description"] == "one\n\n"


@pytest.mark.parametrize("frontmatter", [
    "name: s\ndescription: |\n  Use this:\n  \t- item\n",
    "name: s\ndescription: \"Extracts text\n  \tfrom PDFs.\"\n",
    "name: s\ndescription: 'Extracts text\n  \tfrom PDFs.'\n",
    "name: s\ndescription:\ttabbed after the colon\n",
])
def test_a_tab_that_is_text_is_not_indentation(frontmatter: str):
    doc = parse(f"---\n{frontmatter}---\n")
    assert codes(doc) == [] and doc.meta["description"].startswith(("Use this", "Extracts text", "tabbed"))


@pytest.mark.parametrize("frontmatter,value", [
    ("name: s\ndescription: |\n  \tcode first\n  then text\n", "\tcode first\nthen text\n"),
    ("name: s\ndescription: >-\n    \t.\nlicense: MIT\n", "\t."),
])
def test_a_tab_opening_a_block_scalar_is_text(frontmatter: str, value: str):
    """libyaml refuses a block scalar whose first line starts with a tab after its indentation (P207
    on a valid file, which skills-ref and PyYAML's Python parser read); the tab is the value's text."""
    doc = parse(f"---\n{frontmatter}---\n")
    assert codes(doc) == [] and doc.meta["description"] == value
    assert doc.frontmatter.scalars[("description",)].position == Position(3, 14)


def test_unquoted_colon_offers_a_quoting_fix():
    doc = parse("---\nname: s\ndescription: Use when: asked\n---\n")
    (d,) = doc.diagnostics
    assert d.fix is not None
    (edit,) = d.fix.edits
    text = doc.text
    assert text[: edit.start] + edit.replacement + text[edit.end :] == \
        "---\nname: s\ndescription: 'Use when: asked'\n---\n"


@pytest.mark.parametrize("value", ["Use when: asked # see below", "Fix: see issue #123"])
def test_no_quoting_fix_when_a_hash_may_be_text_or_a_comment(value: str):
    """` #` after `: `: a comment (`# see below`) or text (`issue #123`)? Quoting all of it turned the
    comment into text, quoting up to it cut the text: no fix is safe, so none is offered."""
    doc = parse(f"---\nname: s\ndescription: {value}\n---\n")
    (d,) = [d for d in doc.diagnostics if d.code == "P209"]
    assert d.fix is None


@pytest.mark.parametrize("frontmatter", [
    "name: s\ndescription: Does a thing.\n  Note: read the docs\n",  # the line continues the value above
    "name: s\ndescription: Use when: asked\n\n  and more text\n",   # the value goes on after a blank line
])
def test_no_quoting_fix_for_a_line_of_a_multi_line_value(frontmatter: str):
    """Quoting one line of a plain scalar written over several lines mends nothing (the colon is
    still in the value) or cuts the value: `--fix` wrote `Note: 'read the docs'` and P209 stayed."""
    doc = parse(f"---\n{frontmatter}---\n")
    (d,) = [d for d in doc.diagnostics if d.code == "P209"]
    assert d.fix is None


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029"])
def test_a_break_only_yaml_sees_moves_no_position_and_no_fix(brk: str):
    """NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR end a line for YAML, not in the file: positions
    below one were a line off, and the quoting fix edited the line below the broken one (it turned
    `user-invocable: true` into the text 'true')."""
    doc = parse(f"---\nname: s\ndescription: Notes{brk}  more.\nwhen: ends with colon:\nuser-invocable: true\n---\n")
    (d,) = doc.diagnostics
    assert (d.code, d.line, d.column) == ("P209", 4, 22)
    (edit,) = d.fix.edits
    fixed = doc.text[: edit.start] + edit.replacement + doc.text[edit.end :]
    assert fixed == doc.text.replace("when: ends with colon:", "when: 'ends with colon:'")
    doc = parse(f"---\nname: s\ndescription: \"Does it.{brk}Use when asked.\"\nversion: 2.0\nlicense: 2.0\n---\n")
    assert doc.frontmatter.keys[("version",)] == Position(4, 1)
    version = doc.frontmatter.scalars[("version",)]
    assert (version.position, version.end) == (Position(4, 10), Position(4, 13))
    assert doc.frontmatter.scalars[("description",)].end == Position(3, 40)
    # (a value holding such a break is several lines to YAML: quoting it would change its text)
    doc = parse(f"---\nname: s\ndescription: a{brk}  b: c\n---\n")
    assert [(d.code, d.line, d.fix) for d in doc.diagnostics] == [("P209", 3, None)]


def test_convention_files_need_no_frontmatter():
    assert codes(parse("# Team rules\n", ItemKind.CONVENTION)) == []


# --- encodings and binary ------------------------------------------------------------------------

@pytest.mark.parametrize("raw,where", [
    (b"---\nname: s\x00\x01\x02\n---\n", (0, 0)),
    ("---\nname: s\n---\n".encode("utf-16"), (1, 1)),
    (b"---\nname: s\ndescription: caf\xe9\n---\n", (3, 17)),
    (bytes(range(256)) * 4, (0, 0)),
])
def test_binary_and_non_utf8_files(raw, where):
    doc = parse(raw)
    (d,) = doc.diagnostics
    assert d.code == "P211" and d.severity is Severity.ERROR and (d.line, d.column) == where
    assert doc.frontmatter is None


def test_file_over_the_size_limit_is_not_parsed():
    doc = parse(b"---\n" + b"a" * (MAX_FILE_BYTES + 1))
    assert codes(doc) == ["P212"] and doc.text == ""


def test_50_mb_skill_file_is_reported_without_reading_it_whole(tmp_path: Path):
    d = tmp_path / "big"
    d.mkdir()
    with open(d / "SKILL.md", "wb") as fh:  # sparse: 50 MB on paper, nothing on disk
        fh.truncate(50 * 1024 * 1024)
    doc = read_item(str(tmp_path), DiscoveredItem(ItemKind.SKILL, "big/SKILL.md", "big", "SKILL.md"))
    (diag,) = doc.diagnostics
    assert diag.code == "P212" and "52,428,800 bytes" in diag.message and diag.path == "big/SKILL.md"
    assert doc.size == 52_428_800 and len(doc.sha256) == 64


# --- hostile YAML --------------------------------------------------------------------------------

BOMB = "---\n" + "\n".join(
    [f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]"
     for i in range(9)]) + "\n---\n"


def test_alias_bomb_is_bounded():
    doc = parse(BOMB)
    (d,) = doc.diagnostics
    assert d.code == "P213" and "alias" in d.message and d.line > 2


@pytest.mark.parametrize("kind", ["flow", "flowmap", "block", "blockmap", "mixed"])
def test_deep_nesting_is_refused_quickly_and_safely(kind):
    # In a child process: a crash of the C parser (segfault) would show as a negative return code.
    n = 100_000
    make = {
        "flow": f"b'---\\na: ' + b'[' * {n} + b']' * {n} + b'\\n---\\n'",
        "flowmap": f"b'---\\na: ' + b'{{a: ' * {n} + b'}}' * {n} + b'\\n---\\n'",
        "block": f"b'---\\na:\\n' + b'- ' * {n} + b'x\\n---\\n'",
        "blockmap": "b'---\\n' + b''.join(b' ' * i + b'k:\\n' for i in range(600)) + b'---\\n'",
        "mixed": f"b'---\\na:\\n' + b'- [' * {n} + b'\\n---\\n'",
    }[kind]
    code = ("from skillc.parse.document import parse_document\n"
            f"doc = parse_document({make}, 'SKILL.md')\n"
            "print(','.join(d.code for d in doc.diagnostics))\n")
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("P213", "P209")


def test_brackets_inside_quoted_text_are_not_nesting():
    doc = parse("---\nname: s\ndescription: '" + "[" * 5000 + "'\n---\n")
    assert codes(doc) == []


def test_unsupported_tags_are_refused():
    doc = parse("---\nname: !!python/object:os.system x\n---\n")
    assert codes(doc) == ["P209"] and "tag" in doc.diagnostics[0].message


@pytest.mark.parametrize("value, message", [
    ("!!int ''", "'' is not a valid int"),
    ("!!float ''", "'' is not a valid float"),
    ("!!bool maybe", "'maybe' is not a valid bool"),
    ("!!timestamp soon", "'soon' is not a valid timestamp"),
    ("!!set x", "unsupported YAML tag"),  # a collection tag on a scalar (was a generator object)
    ("!!omap x", "unsupported YAML tag"),
])
def test_explicit_scalar_tags_that_do_not_fit_the_value_are_diagnosed(value, message):
    doc = parse(f"---\nname: s\nversion: {value}\n---\n")
    assert codes(doc) == ["P209"] and message in doc.diagnostics[0].message
    assert (doc.diagnostics[0].line, doc.diagnostics[0].column) == (3, 10)


@pytest.mark.parametrize("value, message", [
    ("2024-13-45", "'2024-13-45' is not a valid timestamp (month must be in 1..12)"),
    ("2023-02-29", "'2023-02-29' is not a valid timestamp (day is out of range for month)"),
    ("!!float 1x", "'1x' is not a valid float"),
])
def test_a_value_its_constructor_refuses_is_reported_where_it_is_written(value, message):
    """A plain date that is no date (month 13) made the timestamp constructor raise ValueError,
    which was reported at the frontmatter's first line (2:1), not at the value."""
    doc = parse(f"---\nname: s\ndescription: d\ncreated: {value}\n---\n")
    assert codes(doc) == ["P209"] and message in doc.diagnostics[0].message
    assert (doc.diagnostics[0].line, doc.diagnostics[0].column) == (4, 10)


def test_a_binary_value_is_not_called_text():
    """`!!binary` builds bytes, which messages named "text": "'model' must be text, found text"."""
    from skillc.parse.document import a_type_name

    doc = parse("---\nname: s\nversion: !!binary aGVsbG8=\n---\n")
    assert doc.frontmatter.data["version"] == b"hello"
    assert a_type_name(b"hello") == "binary data"


def test_positions_and_scalars_survive_pickling_to_workers():
    import pickle

    doc = parse("---\nname: s\nmetadata:\n  version: '1.0'\ntags: [a, b]\n---\nbody\n")
    fm = pickle.loads(pickle.dumps(doc)).frontmatter
    assert fm == doc.frontmatter
    assert fm.keys[("metadata", "version")] == Position(4, 3) and fm.keys[("tags", 1)] == Position(5, 11)
    assert fm.scalars[("metadata", "version")].style == "'" and fm.scalars[("tags", 0)].tag == "str"
    assert sorted(fm.keys) == sorted(doc.frontmatter.keys) and len(fm.scalars) == len(doc.frontmatter.scalars) == 4


# --- properties ----------------------------------------------------------------------------------

TOKENS = ["---", "\n", "\r\n", ":", " ", "- ", "[", "]", "{", "}", "&a ", "*a", "!!str ", "!!binary ", "? ", "'",
          '"', "|", ">", "\t", "#", "name", "description", "2.0", "2024-13-45", "~", "\ufeff", "<<<<<<< x", "```",
          "\x85", "\x00", "é", "---\n", ",", "<<: *a", "!foo ", "%YAML 1.1\n", "...\n", "0x", "1e999", "\ud800",
          "!!int ", "!!bool ", "!!timestamp ", "!!set ", "!!float "]
yamlish = st.lists(st.sampled_from(TOKENS) | st.text(max_size=5), max_size=60).map("".join)


def _check(doc, path="s/SKILL.md"):
    for d in doc.diagnostics:
        assert d.code in RULES, d
        assert d.path == path and d.line >= 0 and d.column >= 0
    assert isinstance(doc.body, str)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(raw):
    _check(parse_document(raw, "s/SKILL.md", ItemKind.SKILL, "s"))


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(yamlish, st.sampled_from(list(ItemKind)))
def test_arbitrary_yamlish_text_never_raises(text, kind):
    _check(parse_document(text.encode("utf-8", "surrogatepass"), "s/SKILL.md", kind, "s"))


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(yamlish.filter(lambda t: "---" not in t and "\r" not in t), st.text(max_size=80), st.booleans())
def test_arbitrary_frontmatter_keeps_the_body_exact(fm, body, crlf):
    nl = "\r\n" if crlf else "\n"
    body = body.replace("\r", "")
    if crlf:
        body = body.replace("\n", "\r\n")
    text = f"---{nl}{fm.replace(chr(10), nl)}{nl}---{nl}{body}"
    doc = parse_document(text.encode("utf-8", "surrogatepass"), "s/SKILL.md", ItemKind.SKILL, "s")
    _check(doc)
    if not any(d.code in ("P211", "P205") for d in doc.diagnostics):
        assert doc.body == body


def test_environment_does_not_leak_into_parsing():
    # Parsing is pure: no file is touched (the path is only a label).
    doc = parse_document(b"---\nname: s\ndescription: d\n---\n", "/etc/passwd", ItemKind.SKILL, None)
    assert doc.path == "/etc/passwd" and not os.path.exists("s")


def test_text_above_the_frontmatter_is_named():
    """A comment or a title above the frontmatter: clients read none of it (seen in real skills)."""
    doc = parse("<!-- https://example.org -->\n---\nname: s\ndescription: d\n---\n# Body\n")
    (d,) = doc.diagnostics
    assert d.code == "P201" and d.message == "frontmatter must start on line 1, found '---' on line 2"


def test_a_mapping_or_list_in_a_list_is_placed_where_it_starts():
    """T5xx and F408 point at a step or a hook: where its item begins, not where the next begins."""
    doc = parse("---\nname: s\ndescription: d\nsteps:\n  - name: one\n    run: x\n  - {}\n  - [a, b]\n---\n")
    fm = doc.frontmatter
    assert [fm.position("steps", i) for i in range(3)] == [Position(5, 5), Position(7, 5), Position(8, 5)]


@settings(max_examples=500)
@given(st.text(alphabet="-\n \t\rx\u2028", max_size=60))
def test_closing_fence_is_the_first_fence_line_after_the_opening_one(text: str):
    """The frontmatter ends at the first `---` line after line 1, found by looking only where a line
    starts with `---`: the same line as searching the multi-line pattern from line 2."""
    text = "---\n" + text
    found, expected = _closing_fence(text, 3), _FENCE_LINE.search(text, 4)
    assert (found and found.span()) == (expected and expected.span())
