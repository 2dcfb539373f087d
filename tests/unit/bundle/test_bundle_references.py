"""`Bundle.apply_references(message)`: seed 004's per-turn `/skill-ref` processing as a library call."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_fixture import build, make_repo
from skillc import Bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Bundle:
    root = tmp_path_factory.mktemp("refs")
    return Bundle.open(build(make_repo(root), Path(root) / "dist"))


def test_a_reference_is_stripped_and_its_block_prepended(bundle):
    applied = bundle.apply_references("/tools/guide read the guide first")
    block = bundle.render_injection("tools/guide")
    assert applied.text == block + "\n\nread the guide first"
    assert applied.rest == "read the guide first" and applied.blocks == (block,)
    assert "<\\/skill>" in block and block.count("</skill>") == 1  # the body's closing tag escaped
    (event,) = applied.events
    assert (event.kind, event.id, event.injection_bytes) == ("SkillsResolved", "tools/guide", len(block.encode()))


def test_a_reference_alone_is_just_the_block(bundle):
    assert bundle.apply_references("/skills/pdf").text == bundle.render_injection("skills/pdf")


def test_an_unknown_id_fails_no_turn(bundle):
    applied = bundle.apply_references("/tools/missing do it")
    assert applied.text == "/tools/missing do it" and applied.blocks == ()
    assert [(e.kind, e.error) for e in applied.failed] == [("SkillResolutionFailed", "Skill 'tools/missing' not found")]


@pytest.mark.parametrize("message", ["use /tools/guide for this", "/Tools/Guide x", "/tools/guide rest\nmore",
                                     "tools/guide", ""])
def test_text_that_is_no_reference_passes_unchanged(bundle, message):
    applied = bundle.apply_references(message)
    assert applied.text == message and applied.events == ()


def test_the_injection_cap_applies(bundle):
    applied = bundle.apply_references("/tools/guide", max_bytes=40)
    assert len(applied.text.encode()) <= 40 and applied.text.endswith("[truncated]")
