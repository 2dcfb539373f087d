"""The frontmatter reader that skips libyaml (``parse.document._simple_yaml``) reads exactly what
libyaml reads: values, key positions and scalars with libyaml's marks, on every frontmatter of the
shared corpora; any other shape is left to libyaml."""

from __future__ import annotations

import os

import pytest

from skillc.parse import document
from skillc.parse.document import load_yaml


def _libyaml(text: str) -> tuple:
    return _plain(document._load_events(document._EventParser(text).get_event, text, 1))


def _plain(result: tuple) -> tuple:
    data, keys, scalars, duplicates = result
    return data, {p: keys[p] for p in keys}, {p: scalars[p] for p in scalars}, duplicates


def _frontmatters(root: str):
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".md"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="surrogateescape") as fh:
                    text = fh.read().replace("\r\n", "\n")
                end = text.find("\n---", 4)
                if text.startswith("---\n") and end > 0:
                    yield text[4 : end + 1]


def test_every_frontmatter_of_the_corpora_reads_as_libyaml_reads_it(corpora):
    read = 0
    for text in _frontmatters(str(corpora)):
        simple = document._simple_yaml(text, 1)
        if simple is not None:
            read += 1
            assert _plain(simple) == _libyaml(text), text
    assert read > 1000  # (the common shape is read without libyaml: the point of it)


COMMON = """name: pdf-tools
description: |
  Extract text from PDFs.
    Indented line kept.

  After a blank line.

license: 'Apache-2.0'
allowed-tools: Read Bash(git:*)
metadata:
  version: "1.2.0"
  tags: pdf, text
  it: 'it''s'
"""


def test_the_common_shape_gives_libyaml_values_positions_and_marks():
    simple = document._simple_yaml(COMMON, 1)
    assert simple is not None
    assert _plain(simple) == _libyaml(COMMON)
    assert simple[0]["description"] == "Extract text from PDFs.\n  Indented line kept.\n\nAfter a blank line.\n"
    assert simple[0]["metadata"] == {"version": "1.2.0", "tags": "pdf, text", "it": "it's"}


@pytest.mark.parametrize("text", [
    "enabled: true\n", "version: 1.0\n", "count: 3\n", "nothing: ~\n", "when: 2024-01-01\n",  # typed values
    "name: x # a comment\n", "# a comment\nname: x\n", "name:  two spaces\n", "name: trailing \n",
    "name: x\nname: y\n",  # a duplicate: libyaml reports it
    "description: >\n  folded\n", "description: |-\n  strip\n", "description: |\n\n  leading blank\n",
    "description: |\n  text\n \n  spaces only between\n",
    "text: plain\n  continued\n", 'text: "two\n  lines"\n', 'text: "esc\\"aped"\n', "text: 'open\n",
    "tools:\n  - Read\n", "empty:\n", "meta:\n  deep:\n    x: y\n", "meta:\n  a: x\n   b: y\n",
    "x: [a, b]\n", "x: {a: b}\n", "x: &a y\n", "x: !tag y\n", "x: a: b\n", "x: a:\n", "x:\ty\n",
    "x: nbsp\u00a0inside\n", "x: line\u2028separator\n", "x: y",  # (no final line break)
])
def test_other_shapes_are_left_to_libyaml(text):
    assert document._simple_yaml(text, 1) is None
    try:  # the reading a document gets is libyaml's (or its error)
        expected = _libyaml(text)
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(type(exc)):
            load_yaml(text, 1)
    else:
        assert _plain(load_yaml(text, 1)) == expected
