"""What the build hands emitters (issue 18): a frozen, typed ``EmitOptions`` and an explicit
``EmitCollected`` for what emitters hand back, instead of a dict where a misspelt key read as its
default without a word (the minimal page lost its lint status that way)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import write_skill


def _skill(tmp_path: Path):
    from skillc.config.build import load_build_config
    from skillc.sources import open_source

    repo = write_skill(tmp_path / "repo", "tools/packer", body="# Packer\n\nPacks.\n").parents[2]
    cfg = load_build_config((str(repo),), None, cwd=tmp_path, home=tmp_path, env={})
    (skill,) = open_source(cfg.repositories[0], cache_dir=tmp_path / "c", lint=cfg.lint).skills().skills
    return skill


def test_a_misspelt_option_is_an_error_not_a_silent_default():
    from skillc.resolve_types import EmitOptions

    with pytest.raises(TypeError, match="lint_sumary"):
        EmitOptions(lint_sumary={"errors": 1})  # type: ignore[call-arg]


def test_an_emitter_cannot_change_what_the_next_emitter_reads(tmp_path: Path):
    from skillc.resolve_types import EmitContext, EmitOptions, Resolution

    ctx = EmitContext(Resolution((), (), (), (), ()), tmp_path, 0.0, options=EmitOptions(site=False))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.options.site = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.options = EmitOptions()  # type: ignore[misc]


def test_a_page_shown_as_text_reaches_the_build_through_the_declared_rule(tmp_path: Path):
    """R130 lands in ``ctx.collected.diagnostics`` (which the build prints) with the code and
    severity the rule declares; a page that is no skill's becomes a note."""
    from skillc.emit.docsite.bounded import Fallback, report_fallbacks
    from skillc.resolve_types import EmitContext, Resolution
    from skillc.validate.rules.loader import load_all

    skill = _skill(tmp_path)
    ctx = EmitContext(Resolution((skill,), (), (), (), ()), tmp_path / "out", 0.0)
    report_fallbacks(ctx, [Fallback("skills/tools/packer/index.md", "too deep"), Fallback("index.md", "slow")])
    ((repository, d),) = ctx.collected.diagnostics
    rule = load_all()["R130"]
    assert (d.code, d.severity, d.skill) == (rule.code, rule.severity, "tools/packer")
    assert repository == skill.repository.name
    assert ctx.collected.notes == ["site page index.md could not be rendered within bounds (slow); shown as plain text"]
