"""The docs site's rebuild memo (issue 21 item 6): each skill's redacted texts, supporting-file pages
and page digest are kept between builds, keyed by everything the site's model reads of the skill.
A record must never be served for inputs it was not made from: each test below changes one input
and checks the model built with the previous build's memo is the one built without it."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import write_skill
from secret_forms import _GHP
from skillc import secrets
from skillc.emit.docsite import incremental, model
from skillc.emit.docsite.model import site_model, site_model_memo
from skillc.emit.skills import SkillArtifacts
from skillc.resolve_types import EmitCollected, EmitContext, EmitOptions, Resolution, SourceInput


def _repo(root: Path) -> None:
    write_skill(root / "repo", "alpha", body="# Alpha\n\nSee [notes](notes.md).\n")
    (root / "repo/alpha/notes.md").write_text("# Notes\n\nFirst notes.\n", encoding="utf-8")
    (root / "repo/alpha/run.py").write_text("print('run')\n", encoding="utf-8")
    write_skill(root / "repo", "tools/beta", body="# Beta\n\nTwo.\n", description="Beta things. Use for beta.")


def _ctx(root: Path, **options) -> EmitContext:
    """The context the site emitter gets for ``root/repo`` (its skills parsed, their files published
    below ``out/api/files/`` as the skills emitter does)."""
    from skillc.config.build import load_build_config
    from skillc.sources import open_source

    cfg = load_build_config((str(root / "repo"),), None, cwd=root, home=root, env={})
    repo = cfg.repositories[0]
    skills = open_source(repo, cache_dir=root / "c", lint=cfg.lint).skills().skills
    out = root / "out"
    artifacts = {}
    for s in skills:
        for f in s.files:
            (out / "api/files" / s.id / f.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f.source_path, out / "api/files" / s.id / f.path)
        artifacts[s.id] = SkillArtifacts(s.id, (f"api/skills/{s.id}", "", 0), tuple((f.path, f.sha256, f.size) for f in s.files),
                                         None, ())
    return EmitContext(Resolution(tuple(sorted(skills, key=lambda s: s.id.encode())), (), (),
                                  (SourceInput(repo.name, repo.type, repo.location),), ()),
                       out, 0.0, options=EmitOptions(cwd=str(root), **options), collected=EmitCollected(artifacts=artifacts))


def _edit(rel: str, old: str, new: str) -> Callable[[Path, EmitContext], EmitContext]:
    def change(root: Path, ctx: EmitContext) -> EmitContext:
        path = root / "repo" / rel
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        return _ctx(root)
    return change


def _priority(root: Path, ctx: EmitContext) -> EmitContext:
    skills = tuple(dataclasses.replace(s, repository=dataclasses.replace(s.repository, priority=300))
                   for s in ctx.resolution.skills)
    return dataclasses.replace(ctx, resolution=dataclasses.replace(ctx.resolution, skills=skills))


def _finding(root: Path, ctx: EmitContext) -> EmitContext:
    repo = ctx.resolution.skills[0].repository.name
    row = {"skill": "alpha", "repository": repo, "severity": "warning", "code": "S201", "path": "alpha/SKILL.md",
           "line": 2, "message": "description is short"}
    return dataclasses.replace(ctx, options=dataclasses.replace(ctx.options, lint_summary={"diagnostics": [row]}))


def _flat_name(root: Path, ctx: EmitContext) -> EmitContext:
    return dataclasses.replace(ctx, resolution=dataclasses.replace(ctx.resolution, flat_names={"alpha": "alpha-2"}))


def _cwd(root: Path, ctx: EmitContext) -> EmitContext:
    return dataclasses.replace(ctx, options=dataclasses.replace(ctx.options, cwd=str(root / "repo")))


def _commit(root: Path, ctx: EmitContext) -> EmitContext:
    inputs = tuple(dataclasses.replace(i, resolved="abc123") for i in ctx.resolution.inputs)
    skills = tuple(dataclasses.replace(s, repository=dataclasses.replace(
        s.repository, type="git", location="https://github.com/acme/skills.git")) for s in ctx.resolution.skills)
    return dataclasses.replace(ctx, resolution=dataclasses.replace(ctx.resolution, inputs=inputs, skills=skills))


def _withheld(root: Path, ctx: EmitContext) -> EmitContext:
    artifacts = dict(ctx.collected.artifacts)
    artifacts["alpha"] = dataclasses.replace(artifacts["alpha"], withheld=(("run.py", "likely secret"),))
    return dataclasses.replace(ctx, collected=EmitCollected(artifacts=artifacts))


def _skills_root(root: Path, ctx: EmitContext) -> EmitContext:
    skills = tuple(dataclasses.replace(s, repository=dataclasses.replace(s.repository, skills_root="skills"))
                   for s in ctx.resolution.skills)
    return dataclasses.replace(ctx, resolution=dataclasses.replace(ctx.resolution, skills=skills))


def _memory_note(root: Path, ctx: EmitContext) -> EmitContext:
    snapshot = {"as_of": "2026-01-01", "entries": [
        {"id": "m1", "namespace": "skill/alpha", "status": "active", "type": "semantic", "category": "fact",
         "content": "Alpha needs Python 3.11."}]}
    (ctx.out / model.MEMORY_SNAPSHOT).parent.mkdir(parents=True, exist_ok=True)
    (ctx.out / model.MEMORY_SNAPSHOT).write_text(json.dumps(snapshot), encoding="utf-8")
    return ctx


CHANGES = {
    "body": _edit("alpha/SKILL.md", "See [notes]", "Read [notes]"),
    "a secret in the body": _edit("alpha/SKILL.md", "See [notes]", f"Token {_GHP}, see [notes]"),
    "description": _edit("alpha/SKILL.md", "Does the thing.", "Does another thing."),
    "frontmatter": _edit("alpha/SKILL.md", "description:", "license: MIT\ndescription:"),
    "a supporting file": _edit("alpha/notes.md", "First notes.", "Second notes."),
    "a secret in a supporting file": _edit("alpha/notes.md", "First notes.", f"Token {_GHP}."),
    "the repository's priority": _priority,
    "a lint finding": _finding,
    "the flat name": _flat_name,
    "the build folder (shown paths)": _cwd,
    "the source and its commit": _commit,
    "a withheld file": _withheld,
    "the repository's skills folder (source paths)": _skills_root,
    "a memory note": _memory_note,
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_memo_record_is_served_only_for_the_inputs_it_was_made_from(tmp_path: Path, change: str):
    _repo(tmp_path)
    before = _ctx(tmp_path)
    first, kept = site_model_memo(before, {})
    after = CHANGES[change](tmp_path, before)
    fresh = site_model(after)
    memoised, _ = site_model_memo(after, kept)
    assert fresh.skills != first.skills  # (the change shows on the site: a stale record would be seen)
    assert memoised == fresh
    # ...and each skill's digest (its pages' key) is the one its info has, not the record's old one.
    assert [s.digest for s in memoised.skills] == [dataclasses.replace(s).digest for s in fresh.skills]


def test_a_secret_stays_redacted_when_its_record_is_reused(tmp_path: Path):
    write_skill(tmp_path / "repo", "alpha", body=f"# Alpha\n\nToken {_GHP}\n")
    (tmp_path / "repo/alpha/notes.md").write_text(f"key {_GHP}\n", encoding="utf-8")
    ctx = _ctx(tmp_path)
    _, kept = site_model_memo(ctx, {})
    again, _ = site_model_memo(ctx, kept)
    (alpha,) = again.skills
    assert _GHP not in alpha.body and "[REDACTED:" in alpha.body
    assert [t.path for t in alpha.texts] == ["notes.md"] and _GHP not in alpha.texts[0].text


def test_a_rebuild_scans_only_the_changed_skill_for_secrets(tmp_path: Path, monkeypatch):
    """The work a one-change rebuild does for the model is the changed skill's: the others' texts
    come from their records (the secret scan was most of the model's cost at 10,000 skills)."""
    _repo(tmp_path)
    _, kept = site_model_memo(_ctx(tmp_path), {})
    after = _edit("tools/beta/SKILL.md", "Two.", "Three.")(tmp_path, None)
    scanned: list[str] = []
    real = secrets.redact
    monkeypatch.setattr(secrets, "redact", lambda text, *a, **k: scanned.append(text) or real(text, *a, **k))
    memoised, _ = site_model_memo(after, kept)
    assert any("Three." in t for t in scanned) and not any("First notes." in t or "See [notes]" in t for t in scanned)
    assert memoised == site_model(after)


def test_records_made_by_other_code_are_not_used(tmp_path: Path, monkeypatch):
    """The key holds the code that made the record (``memo_code_key``): a record another version of
    the model, the templates or the secret scan wrote is made again."""
    _repo(tmp_path)
    ctx = _ctx(tmp_path)
    monkeypatch.setattr(model, "memo_code_key", lambda: "other code")
    _, kept = site_model_memo(ctx, {})
    monkeypatch.undo()
    stale = {sid: (r[0], r[1], "STALE NAME", *r[3:]) for sid, r in kept.items()}
    memoised, _ = site_model_memo(ctx, stale)
    assert "STALE NAME" not in {s.name for s in memoised.skills} and memoised == site_model(ctx)


def test_the_memo_file_round_trips_and_an_unreadable_one_is_ignored(tmp_path: Path):
    _repo(tmp_path)
    ctx = _ctx(tmp_path)
    _, kept = site_model_memo(ctx, {})
    incremental.write_memo(tmp_path / "state", kept)
    assert incremental.read_memo(tmp_path / "state") == kept
    (tmp_path / "state" / incremental.MODEL_MEMO).write_bytes(b"not a pickle")
    assert incremental.read_memo(tmp_path / "state") == {}
    assert [p.name for p in (tmp_path / "state").iterdir()] == [incremental.MODEL_MEMO]  # (no temporary left)


def test_compiled_templates_are_kept_per_code_and_an_older_codes_are_removed(tmp_path: Path):
    first = incremental.compiled_templates(tmp_path, "code 1")
    (first / "__jinja2_x.cache").write_bytes(b"compiled")
    assert incremental.compiled_templates(tmp_path, "code 1") == first and (first / "__jinja2_x.cache").exists()
    second = incremental.compiled_templates(tmp_path, "code 2")
    assert second != first and not first.exists() and list(second.iterdir()) == []


def test_list_pages_read_through_kept_compiled_templates_are_the_pages_compiled_now(tmp_path: Path):
    """The list pages' card and pager HTML (``pages._html_environment``) keep their templates compiled
    beside the page templates, in files of their own; pages rendered from that kept code are the
    pages rendered from the templates compiled afresh."""
    from skillc.emit.docsite.pages import project_plan

    _repo(tmp_path)
    site = site_model(_ctx(tmp_path))
    fresh = {rel: p.render() for rel, p in project_plan(site).items()}
    compiled = incremental.compiled_templates(tmp_path / "state", "code")
    for _ in range(2):  # (the first compiles and writes the cache, the second reads it)
        kept = {rel: p.render() for rel, p in project_plan(site, compiled=compiled).items()}
        assert kept == fresh
    names = sorted(p.name for p in compiled.iterdir())
    assert any(n.startswith("__html_") for n in names) and any(n.startswith("__jinja2_") for n in names)
