"""resolve(): precedence, shadowing, ID checks, collections, browse and query (seed 004)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_skill
from skillc.resolve.precedence import browse, collection_description, id_problem, query, resolve
from skillc.resolve_types import Repository, Tier
from skillc.sources import open_source
from skillc.validate.lint import LintConfig

SEED_IDS = ["extraction/email-extractor", "extraction/fiction-extractor", "extraction/medical/diagnosis",
            "extraction/medical/imaging/ct-scan", "formatting/markdown-output", "pdf-processing"]


def repo_with(root: Path, repo_name: str, ids, tier=Tier.PROJECT, priority=None, order=0, **kw):
    for skill_id in ids:
        write_skill(root, skill_id, **kw)
    repo = Repository(repo_name, "filesystem", str(root), tier, priority or tier.default_priority, order)
    return open_source(repo, cache_dir=root.parent / "cache", lint=LintConfig()).skills()


def test_seed_004_collections_and_browsing(tmp_path):
    listing = repo_with(tmp_path / "a", "a", SEED_IDS)
    (tmp_path / "a/extraction").joinpath("COLLECTION.md").write_text("# Extraction\n\nEntity and relationship extraction\nmore\n")
    listing = open_source(listing.skills[0].repository, cache_dir=tmp_path / "c", lint=LintConfig()).skills()
    res = resolve([listing], settings={"inventory_threshold": 12})
    assert [s.id for s in res.skills] == SEED_IDS
    assert [(c.path, c.description, c.count) for c in res.collections] == [
        ("extraction", "Entity and relationship extraction", 4),
        ("extraction/medical", "2 skills", 2),
        ("extraction/medical/imaging", "1 skill", 1),
        ("formatting", "1 skill", 1),
    ]
    skills, subs = browse(res, "")
    assert [s.id for s in skills] == ["pdf-processing"] and [c.path for c in subs] == ["extraction", "formatting"]
    skills, subs = browse(res, "extraction")
    assert [s.id for s in skills] == ["extraction/email-extractor", "extraction/fiction-extractor"]
    assert [(c.path, c.count) for c in subs] == [("extraction/medical", 2)]
    skills, subs = browse(res, "/extraction/medical/")
    assert [s.id for s in skills] == ["extraction/medical/diagnosis"] and [c.path for c in subs] == ["extraction/medical/imaging"]
    assert browse(res, "nowhere") == ([], [])
    assert res.settings == {"inventory_threshold": 12}


def test_query_is_global_and_case_insensitive(tmp_path):
    listing = repo_with(tmp_path / "a", "a", ["extraction/email-extractor", "formatting/markdown-output"])
    res = resolve([listing])
    assert [s.id for s in query(res, "EMAIL")] == ["extraction/email-extractor"]
    assert [s.id for s in query(res, "the thing")] == ["extraction/email-extractor", "formatting/markdown-output"]
    assert query(res, "zebra") == []


def test_priority_then_declaration_order_and_shadowing(tmp_path):
    builtin = repo_with(tmp_path / "b", "builtin", ["tools/pdf", "tools/csv"], Tier.BUILTIN, order=2)
    user = repo_with(tmp_path / "u", "user", ["tools/pdf"], Tier.USER, order=1)
    project1 = repo_with(tmp_path / "p1", "project1", ["tools/csv"], Tier.PROJECT, order=3)
    project0 = repo_with(tmp_path / "p0", "project0", ["tools/csv"], Tier.PROJECT, order=0)
    res = resolve([builtin, user, project1, project0])  # listing order does not matter
    winners = {s.id: s.repository.name for s in res.skills}
    assert winners == {"tools/pdf": "user", "tools/csv": "project0"}
    rows = [(r.id, r.winner, r.loser, r.winner_priority, r.loser_priority) for r in res.shadowed]
    assert rows == [("tools/csv", "project0", "project1", 250, 250), ("tools/csv", "project0", "builtin", 250, 25),
                    ("tools/pdf", "user", "builtin", 150, 25)]
    assert sum(d.code == "R101" for d in res.diagnostics) == 3
    assert res.shadowed[0].winner_source == str(tmp_path / "p0")
    assert [i.repository for i in res.inputs] == ["project0", "user", "builtin", "project1"]


def test_same_name_case_collision_and_unsafe_ids(tmp_path):
    listing = repo_with(tmp_path / "a", "a", ["a/pdf", "b/pdf"], name="pdf")
    res = resolve([listing])
    assert [d.code for d in res.diagnostics if d.code == "R102"] == ["R102", "R102"]
    listing = repo_with(tmp_path / "c", "c", ["Tools/pdf", "tools/csv", "what%20"])
    res = resolve([listing])
    codes = sorted(d.code for d in res.diagnostics if d.severity.value == "error")
    assert codes == ["R103", "R103", "R104"]
    r103 = next(d for d in res.diagnostics if d.code == "R103")
    assert "'Tools' and 'tools' differ only by case" in r103.message
    # Safe, but Meerkat's /skill-ref cannot name it (seed 004: /[a-z0-9-]+(/[a-z0-9-]+)*): a warning
    assert [(d.skill, d.severity.value) for d in res.diagnostics if d.code == "R109"] == [("Tools/pdf", "warning")]
    listing = repo_with(tmp_path / "d", "d", ["my-tools/pdf", "My_Col/foo", ".curated/x", "v1.2/y"])
    warned = sorted(d.skill for d in resolve([listing]).diagnostics if d.code == "R109")
    assert warned == [".curated/x", "My_Col/foo", "v1.2/y"]


def test_collection_description_first_line_of_prose():
    assert collection_description("Entity extraction\n") == "Entity extraction"
    assert collection_description("---\ntitle: x\n---\n\n# Head\n<!-- c -->\nProse here.\n") == "Prose here."
    assert collection_description("# Only a heading\n") == "Only a heading"
    assert collection_description("\n\n") == ""


def test_a_collection_is_described_by_a_repository_that_offers_skills_in_it(tmp_path):
    """A repository whose include/exclude globs leave a subtree out does not describe it: the text of
    the repository that does offer those skills is used (its COLLECTION.md, else "N skills")."""
    from dataclasses import replace

    for name, ids, text in (("r1", ["tools/lint", "tools/fmt"], "Tools from r1."),
                            ("r2", ["tools/lint", "tools/test", "legacy/old"], "Tools from r2.")):
        for skill_id in ids:
            write_skill(tmp_path / name, skill_id)
        (tmp_path / name / "tools/COLLECTION.md").write_text(f"{text}\n")
    (tmp_path / "r3/legacy").mkdir(parents=True)
    write_skill(tmp_path / "r3", "legacy/old")
    write_skill(tmp_path / "r3", "misc/x")
    (tmp_path / "r3/legacy/COLLECTION.md").write_text("Legacy r3.\n")

    def listing(name, priority, order, **globs):
        repo = replace(Repository(name, "filesystem", str(tmp_path / name), Tier.PROJECT, priority, order), **globs)
        return open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig()).skills()

    res = resolve([listing("r1", 300, 0, exclude=("tools",)), listing("r2", 220, 1),
                   listing("r3", 300, 2, include=("misc",))])
    assert [(c.path, c.description) for c in res.collections] == [
        ("legacy", "1 skill"), ("misc", "1 skill"), ("tools", "Tools from r2.")]


def test_a_name_shared_by_many_skills_is_named_briefly(tmp_path):
    """R102 names five IDs and counts the rest (every member's message held all of them: about 1 GB
    of strings for one name shared by 8,000 skills); lint's C801 the same way."""
    ids = [f"c{i}/same" for i in range(8)]
    listing = repo_with(tmp_path / "a", "a", ids)
    messages = {d.message for d in resolve([listing]).diagnostics if d.code == "R102"}
    assert messages == {"the name 'same' is used by 8 skills: 'c0/same', 'c1/same', 'c2/same', 'c3/same', "
                        "'c4/same' and 3 more"}
    from skillc.validate.lint import lint_root

    c801 = sorted(d.message for d in lint_root(tmp_path / "a").diagnostics if d.code == "C801")
    assert c801[0] == ("skill name 'same' is also used by c0/same/SKILL.md, c1/same/SKILL.md, c2/same/SKILL.md, "
                       "c3/same/SKILL.md, c4/same/SKILL.md and 2 more")  # (c5, c6 and c7's)
    assert c801[-1] == ("skill name 'same' is also used by c1/same/SKILL.md, c2/same/SKILL.md, c3/same/SKILL.md, "
                        "c4/same/SKILL.md, c5/same/SKILL.md and 2 more")  # (c0's)


def test_c1_control_characters_make_an_id_unsafe():
    # R104 refuses control characters: C1 (U+0080-U+009F) too, not only C0 and DEL (NEL is a line
    # break to YAML and XML 1.1, CSI a terminal escape); `nel\x85x` was published.
    for cp in ("\x80", "\x85", "\x9b", "\x9f"):
        problem = id_problem(f"tools/a{cp}b")
        assert problem and "control characters" in problem, repr(cp)
    assert id_problem("tools/nb\xa0sp") is None  # (U+00A0, the first code point after C1, is no control)


def test_plain_ids_are_still_refused_for_device_names_and_lengths():
    # Lowercase ASCII IDs are answered without the per-segment checks: the ones those checks refuse
    # all the same (a Windows device name as a whole segment, a segment over 255 bytes, an ID whose
    # percent-encoded form, '/' as %2F, passes the file name limit).
    for reserved in ("con", "group/prn", "aux/x", "a/nul/b", "com1", "tools/lpt9"):
        problem = id_problem(reserved)
        assert problem and "reserved device name" in problem, reserved
    assert id_problem("console/prn-tools/com10") is None  # (a device name inside a longer one is fine)
    assert "longer than 255 bytes" in id_problem("a/" + "x" * 256)
    assert id_problem("a/" + "x" * 240) is None
    deep = "/".join(["abcdefgh"] * 24)  # 215 characters, 23 slashes: 261 once encoded
    assert len(deep) < 251 and "once percent-encoded" in id_problem(deep)
    assert id_problem("/".join(["abcdefgh"] * 22)) is None  # (239 once encoded)
    for odd in ("a//b", "a/", "/a", "a/-", "a_b/c-d", ""):
        assert (id_problem(odd) is None) == (odd in ("a/-", "a_b/c-d")), odd


def test_ids_differing_by_case_in_a_collection_are_reported_once_per_spelling(tmp_path):
    listing = repo_with(tmp_path / "r", "r", ["Tools/a", "tools/b", "tools/c", "tools/c/d"])
    found = [d for d in resolve([listing]).diagnostics if d.code == "R103"]
    assert [(d.skill, d.message) for d in found] == [
        ("Tools/a", "'Tools' and 'tools' differ only by case; they collide on case-insensitive filesystems and hosts"),
        ("tools/b", "'Tools' and 'tools' differ only by case; they collide on case-insensitive filesystems and hosts")]
