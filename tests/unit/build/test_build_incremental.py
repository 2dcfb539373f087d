"""Incremental builds stay correct: a changed source file is always processed again (whatever its
size and times), an unchanged one is neither read nor hashed, and what a rebuild publishes and lists
equals a fresh build."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

from test_build_trust import assert_same_tree, build_json

from bundle_contract import build_env, make_sample_repo
from conftest import run_skillc, write_skill
from skillc.cache import RACY_NS, BuildCache
from skillc.jsonio import json_bytes
from skillc.model import ItemKind

SECOND = 1_000_000_000


def _settled_cache(root: Path, *paths: Path) -> BuildCache:
    """A cache as a build that started well after ``paths`` were last changed leaves it."""
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in (p.stat() for p in paths))
    return BuildCache(root, started_ns=newest + RACY_NS + SECOND)


def _same_size_edit(path: Path, old: bytes, new: bytes, keep_mtime: bool) -> None:
    assert len(old) == len(new) and old != new
    st = path.stat()
    path.write_bytes(new)
    if keep_mtime:  # what `touch -r` or an editor restoring times does: only the ctime moves
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_unchanged_files_are_not_read_or_hashed(tmp_path: Path):
    f = tmp_path / "notes.md"
    f.write_bytes(b"hello world\n")
    first = _settled_cache(tmp_path / "cache", f)
    digest, size = first.file_digest(str(f), f.stat())
    first.save()
    second = BuildCache(tmp_path / "cache")
    assert second.file_digest(str(f), f.stat()) == (digest, size)
    assert (second.stats.hashed, second.stats.stat_cached) == (0, 1)


def test_a_same_size_edit_is_always_seen(tmp_path: Path):
    f = tmp_path / "notes.md"
    f.write_bytes(b"version one\n")
    for keep_mtime in (True, False):
        cache = _settled_cache(tmp_path / "cache", f)
        before, _ = cache.file_digest(str(f), f.stat())
        cache.save()
        old = f.read_bytes()
        _same_size_edit(f, old, old.swapcase(), keep_mtime)  # same size, within the same second
        after, _ = BuildCache(tmp_path / "cache").file_digest(str(f), f.stat())
        assert after != before and after == hashlib.sha256(f.read_bytes()).hexdigest()


def test_a_file_replaced_by_another_with_the_same_size_and_times_is_seen(tmp_path: Path):
    f, other = tmp_path / "notes.md", tmp_path / "other.md"
    f.write_bytes(b"aaaa\n")
    other.write_bytes(b"bbbb\n")
    st = f.stat()
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    cache = _settled_cache(tmp_path / "cache", other)
    cache.file_digest(str(f), f.stat())
    cache.save()
    os.replace(other, f)  # editors save by renaming a new file over the old one
    cache = BuildCache(tmp_path / "cache")
    digest, _ = cache.file_digest(str(f), f.stat())
    assert cache.stats.hashed == 1 and digest == hashlib.sha256(b"bbbb\n").hexdigest()


def test_a_stat_recorded_by_a_build_that_began_as_the_file_changed_is_not_trusted(tmp_path: Path):
    # The file was written as the build began: an edit in the same clock tick after it was hashed
    # would leave its stat as it is, so the next build hashes it again.
    f = tmp_path / "notes.md"
    f.write_bytes(b"racy\n")
    st = f.stat()
    cache = BuildCache(tmp_path / "cache", started_ns=max(st.st_mtime_ns, st.st_ctime_ns))
    cache.file_digest(str(f), st)
    cache.save()
    again = BuildCache(tmp_path / "cache")
    again.file_digest(str(f), f.stat())
    assert (again.stats.hashed, again.stats.stat_cached) == (1, 0)
    # Hashed again by a build that began well after the change, it is trusted from then on.
    again.started_ns = max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS + SECOND
    again._new["stat"].clear()
    again.file_digest(str(f), None)
    again.save()
    third = BuildCache(tmp_path / "cache")
    third.file_digest(str(f), f.stat())
    assert (third.stats.hashed, third.stats.stat_cached) == (0, 1)


def test_a_settled_skill_md_is_rebuilt_from_the_cache_without_reading_it(tmp_path: Path):
    write_skill(tmp_path, "s", body="# S\n\nBody.\n")
    path = tmp_path / "s/SKILL.md"
    first = _settled_cache(tmp_path / "cache", path)
    parsed = first.read_document(str(tmp_path), "s/SKILL.md", ItemKind.SKILL, "s", path.stat())
    first.save()
    second = BuildCache(tmp_path / "cache")
    doc = second.read_document(str(tmp_path), "s/SKILL.md", ItemKind.SKILL, "s", path.stat())
    assert doc == parsed and doc.text == path.read_text()
    assert (second.stats.hashed, second.stats.stat_cached, second.stats.cached) == (0, 1, 1)
    old = path.read_bytes()
    _same_size_edit(path, old, old.replace(b"Body.", b"Bodx."), keep_mtime=True)
    third = BuildCache(tmp_path / "cache")
    doc = third.read_document(str(tmp_path), "s/SKILL.md", ItemKind.SKILL, "s", path.stat())
    assert "Bodx." in doc.body and third.stats.parsed == 1


def test_cache_saves_new_records_beside_the_table_and_compacts_what_went_unused(tmp_path: Path):
    root = tmp_path / "cache"
    cache = BuildCache(root)
    for i in range(100):
        cache.put("lint", f"k{i}", (i,))
    cache.save()
    table = root / "lint.pickle"
    inode = table.stat().st_ino
    # One record changed: the table stays, the new record goes to the delta.
    cache = BuildCache(root)
    for i in range(99):
        assert cache.get("lint", f"k{i}") == (i,)
    cache.put("lint", "new", ("n",))
    cache.save()
    assert table.stat().st_ino == inode and (root / "lint.delta.pickle").is_file()
    cache = BuildCache(root)
    assert cache.get("lint", "new") == ("n",) and cache.get("lint", "k5") == (5,)
    # Most records unused: the table is rewritten with only the used ones.
    cache = BuildCache(root)
    for key in ("k1", "new"):
        cache.get("lint", key)
    cache.save()
    assert not (root / "lint.delta.pickle").exists()
    cache = BuildCache(root)
    assert cache.get("lint", "k1") == (1,) and cache.get("lint", "new") == ("n",) and cache.get("lint", "k2") is None


def test_each_save_keeps_exactly_the_records_the_build_used_whatever_it_did(tmp_path: Path):
    """``save`` finds what to write from the keys given new records (not by comparing every record):
    over builds that read, replace, add and drop records at random, the next build always finds
    exactly the records the last one used, with their last values; a build that changed nothing
    writes nothing."""
    import random

    rng = random.Random(7)
    root = tmp_path / "cache"
    expected: dict[str, tuple] = {}
    for _ in range(40):
        cache = BuildCache(root)
        assert {k: cache._old["lint"][k] for k in cache._old["lint"]} == expected
        used: dict[str, tuple] = {}
        for _ in range(rng.choice([0, 3, 30, 120])):
            key = f"k{rng.randrange(80)}"
            if rng.random() < 0.7:
                value = cache.get("lint", key)
                if value is not None:
                    used[key] = value
            else:
                value = cache.get("lint", key) if rng.random() < 0.3 else None
                if value is None:
                    value = (rng.randrange(4),)
                    cache.put("lint", key, value)
                used[key] = value
        before = {p.name: p.stat().st_mtime_ns for p in root.glob("lint*")} if root.is_dir() else {}
        cache.save()
        if used == expected and before:
            assert {p.name: p.stat().st_mtime_ns for p in root.glob("lint*")} == before
        expected = used


def test_the_discovery_rows_a_rebuild_reuses_change_with_each_input_they_are_made_of(tmp_path: Path):
    """The well-known indexes' rows and legacy files are cached per skill (``emit.wellknown``, table
    ``wellknown``): after a change of each thing a row or file shows (the description, a file's bytes, a file added, the
    flat name when another skill takes the same leaf, the ID with the same leaf and archive), the
    rebuilt indexes equal a build
    without a cache, and the unchanged skills' rows came from the cache."""
    from skillc.build.pipeline import BuildOptions, run_build
    from skillc.emit.wellknown import INDEX, LEGACY_INDEX

    repo = tmp_path / "repo"
    for i in range(4):
        write_skill(repo, f"tools/skill-{i}")
    (repo / "tools/skill-1/references").mkdir()
    (repo / "tools/skill-1/references/notes.md").write_text("notes\n")

    def build(out: str, cache: bool = True):
        return run_build(BuildOptions(paths=(str(repo),), out=str(tmp_path / out), site=False, cwd=tmp_path,
                                      use_cache=cache, cache_dir=tmp_path / "cache",
                                      env={"SOURCE_DATE_EPOCH": "1700000000"}, home=tmp_path))

    def indexes(out: str) -> tuple:
        tree = tmp_path / out / ".well-known/skills"  # (its files come from the same records)
        files = {p.relative_to(tree).as_posix(): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
        return (*((tmp_path / out / rel).read_bytes() for rel in (INDEX, LEGACY_INDEX)), files)

    build("out")
    steps = [
        lambda: write_skill(repo, "tools/skill-0", description="Changed. Use when the user asks for the change."),
        lambda: (repo / "tools/skill-1/references/notes.md").write_text("NOTES\n"),  # same size, other bytes
        lambda: (repo / "tools/skill-2/extra.md").write_text("extra\n"),
        lambda: write_skill(repo, "other/skill-3"),  # skill-3's flat name becomes its whole ID
        lambda: (repo / "tools/skill-1").rename(repo / "tools/skill-9"),
        lambda: (repo / "moved").mkdir() or (repo / "tools/skill-2").rename(repo / "moved/skill-2"),  # same leaf, bytes
    ]
    # (its main file's spelling: the indexes call it SKILL.md, its legacy file links the published skill.md)
    respelled = lambda: (repo / "moved/skill-2/SKILL.md").rename(repo / "moved/skill-2/skill.md")  # noqa: E731
    for step in [*steps, respelled]:
        step()
        before = json.loads((tmp_path / "out" / INDEX).read_bytes())
        result = build("out")
        shutil.rmtree(tmp_path / "fresh", ignore_errors=True)
        build("fresh", cache=False)
        assert indexes("out") == indexes("fresh")
        assert json.loads((tmp_path / "out" / INDEX).read_bytes()) != before or step is respelled
        assert result.stats["render_cached"] >= 2  # (the others were not rebuilt)
    names = {s["id"]: s["name"] for s in json.loads((tmp_path / "out" / INDEX).read_bytes())["skills"]}
    assert names["tools/skill-3"] != "skill-3" and "tools/skill-9" in names and "tools/skill-1" not in names
    assert names["moved/skill-2"] == "skill-2"


def _on_disk(bundle: Path) -> list[str]:
    files = (p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    return sorted((p for p in files if p != "api/manifest.json"), key=lambda p: p.encode())


def _empty_dirs(bundle: Path) -> list[str]:
    return [p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_dir() and not any(p.iterdir())]


def test_rebuilds_publish_and_list_what_a_fresh_build_does(tmp_path: Path):
    repo = tmp_path / "repo"
    make_sample_repo(repo)
    (repo / "scripts-demo/config").mkdir()
    (repo / "scripts-demo/config/settings.txt").write_text("ghp_R8kd93JdkL0qpZx7Vb2Nm4Wc6Ty1Hs5Ea9Uo\n")
    (tmp_path / "skills.toml").write_text('[lint]\nignore = ["B707"]\n')  # publish it, withholding the secret
    build_json(tmp_path, "repo", "--out", "out")
    withheld = json.loads((tmp_path / "out/api/manifest.json").read_bytes())["withheld"]
    assert ("scripts-demo", "config/settings.txt") in {(w["id"], w["path"]) for w in withheld}
    steps = [
        lambda: (repo / "scripts-demo/references/REFERENCE.md").write_text("# Reference\n\nDetailz.\n"),  # same size
        lambda: write_skill(repo, "pdf-processing", description="Process PDF files. Use for PDFs. Changed."),
        lambda: shutil.rmtree(repo / "extraction/email"),
        lambda: write_skill(repo, "added/new-one"),
        lambda: None,
    ]
    for step in steps:
        step()
        build_json(tmp_path, "repo", "--out", "out")
        out = tmp_path / "out"
        manifest = json.loads((out / "api/manifest.json").read_bytes())
        assert [f["path"] for f in manifest["files"]] == _on_disk(out)
        assert not _empty_dirs(out / "api")  # the folder of the withheld config/ file is not left behind
        for rel in ("api/manifest.json", ".well-known/agent-skills/index.json"):
            raw = (out / rel).read_bytes()
            assert raw == json_bytes(json.loads(raw), pretty=True), rel
    assert (tmp_path / "out/api/files/scripts-demo/references/REFERENCE.md").read_text().endswith("Detailz.\n")
    r = run_skillc("build", "repo", "--out", "fresh", "--no-cache", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert_same_tree(tmp_path / "out", tmp_path / "fresh")


def _wait_until_settled(root: Path) -> None:
    """Until every file and folder below ``root`` changed more than ``RACY_NS`` ago (a build that
    begins then may trust their stats)."""
    newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in (p.stat() for p in [root, *root.rglob("*")]))
    while time.time_ns() <= newest + RACY_NS + SECOND // 10:
        time.sleep(0.05)


def test_a_same_size_edit_after_a_build_is_published(tmp_path: Path):
    repo = tmp_path / "repo"
    write_skill(repo, "one", body="# One\n\nAlpha.\n")
    write_skill(repo, "two")
    (repo / "one/references").mkdir()
    (repo / "one/references/notes.md").write_text("alpha\n")
    _wait_until_settled(repo)
    build_json(tmp_path, "repo", "--out", "out")
    again = build_json(tmp_path, "repo", "--out", "out")
    assert (again["hashed"], again["stat_cached"], again["listed"]) == (0, 3, 0)  # nothing read or listed
    skill, notes = repo / "one/SKILL.md", repo / "one/references/notes.md"
    _same_size_edit(skill, skill.read_bytes(), skill.read_bytes().replace(b"Alpha", b"Omega"), keep_mtime=True)
    _same_size_edit(notes, notes.read_bytes(), b"omega\n", keep_mtime=True)
    result = build_json(tmp_path, "repo", "--out", "out")
    assert (result["parsed"], result["hashed"]) == (1, 2)
    assert json.loads((tmp_path / "out/api/skills/one").read_text())["body"] == "# One\n\nOmega.\n"
    assert (tmp_path / "out/api/files/one/references/notes.md").read_text() == "omega\n"


def test_a_remembered_skill_listing_sees_added_removed_and_nested(tmp_path: Path):
    from skillc.sources.filesystem import skill_files

    root = tmp_path / "repo"
    write_skill(root, "s")
    (root / "s/references").mkdir()
    (root / "s/references/a.md").write_text("a\n")
    (root / "s/sub").mkdir()
    (root / "s/sub/x.txt").write_text("x\n")

    def listing(nested=frozenset()) -> tuple[list[str], BuildCache]:
        cache = _settled_cache(tmp_path / "cache", root, *root.rglob("*"))
        files = skill_files(str(root), "s", set(nested), "SKILL.md", cache.file_digest, cache)
        cache.save()
        return [f.path for f in files], cache

    assert listing()[0] == ["references/a.md", "sub/x.txt"]
    paths, cache = listing()
    assert paths == ["references/a.md", "sub/x.txt"] and (cache.stats.listed, cache.stats.hashed) == (0, 0)
    (root / "s/references/b.md").write_text("b\n")
    assert listing()[0] == ["references/a.md", "references/b.md", "sub/x.txt"]
    (root / "s/references/a.md").unlink()
    assert listing()[0] == ["references/b.md", "sub/x.txt"]
    write_skill(root, "s/sub")  # sub/ becomes a skill of its own: no longer part of s
    assert listing({"s/sub"})[0] == ["references/b.md"]
    assert listing()[0] == ["references/b.md", "sub/SKILL.md", "sub/x.txt"]


def test_a_listing_checked_with_the_walks_stats_sees_added_removed_and_nested(tmp_path: Path):
    """The remembered walk hands the stats it took to the skills' listings (``seen``: one ``stat`` a
    folder, not two); a listing checked with them still sees every file added or removed, in the
    skill's folder or below, and a folder that became a skill."""
    from skillc.discover.walk import DiscoveryOptions
    from skillc.sources.filesystem import remembered_discovery, skill_files

    root = Path(os.path.realpath(tmp_path)) / "repo"
    write_skill(root, "s")
    (root / "s/references").mkdir()
    (root / "s/references/a.md").write_text("a\n")

    def listing(nested=frozenset()) -> tuple[list[str], BuildCache, dict]:
        cache = _settled_cache(tmp_path / "cache", root, *root.rglob("*"))
        seen: dict = {}
        remembered_discovery(root, DiscoveryOptions(), cache, seen)
        files = skill_files(str(root), "s", set(nested), "SKILL.md", cache.file_digest, cache, seen)
        cache.save()
        return [f.path for f in files], cache, seen

    assert listing()[0] == ["references/a.md"]
    paths, cache, seen = listing()
    assert paths == ["references/a.md"] and (cache.stats.listed, cache.stats.walked) == (0, 0)
    assert f"{root}/s" in seen and f"{root}/s/references" in seen  # (taken by the walk, not again)
    (root / "s/references/b.md").write_text("b\n")
    assert listing()[0] == ["references/a.md", "references/b.md"]
    (root / "s/c.md").write_text("c\n")
    assert listing()[0] == ["c.md", "references/a.md", "references/b.md"]
    (root / "s/references/a.md").unlink()
    assert listing()[0] == ["c.md", "references/b.md"]
    write_skill(root, "s/references")  # references/ becomes a skill of its own: no longer part of s
    assert listing({"s/references"})[0] == ["c.md"]


def _warm_equals_cold(tmp_path: Path, step) -> None:
    """After ``step``, a rebuild with the cache and the recycled generation gives a fresh build's bundle."""
    step()
    build_json(tmp_path, "repo", "--out", "out", "--keep-going", "--no-site")
    shutil.rmtree(tmp_path / "fresh", ignore_errors=True)
    r = run_skillc("build", "repo", "--out", "fresh", "--no-cache", "--keep-going", "--no-site", cwd=tmp_path,
                   env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert_same_tree(tmp_path / "out", tmp_path / "fresh")


def test_rebuilds_see_what_the_cache_keys_once_missed(tmp_path: Path):
    """From a differential fuzz of warm against cold builds: an execute bit (kept in the zip), a file
    replaced by a folder of the same name (in the recycled generation), an empty folder a link points
    to, and a file the build never publishes (*.pyc holding a token) each give the fresh bundle."""
    repo = tmp_path / "repo"
    write_skill(repo, "pdf", body="# PDF\n\nSee [data](data/).\n")
    (repo / "pdf/scripts").mkdir()
    (repo / "pdf/scripts/run.sh").write_text("echo hi\n")
    (repo / "pdf/agents").mkdir()
    (repo / "pdf/agents/openai.yaml").write_text("a: 1\n")
    write_skill(repo, "csv")
    for _ in range(2):  # the second build swaps out a generation the next one recycles
        build_json(tmp_path, "repo", "--out", "out", "--keep-going", "--no-site")

    def folder_for_file():
        (repo / "pdf/agents/openai.yaml").unlink()
        (repo / "pdf/agents/openai.yaml").mkdir()
        (repo / "pdf/agents/openai.yaml/inside.md").write_text("hi\n")

    _warm_equals_cold(tmp_path, lambda: (repo / "pdf/scripts/run.sh").chmod(0o755))
    with zipfile.ZipFile(tmp_path / "out/api/archives/pdf.zip") as zf:
        assert zf.getinfo("pdf/scripts/run.sh").external_attr >> 16 & 0o777 == 0o755
    _warm_equals_cold(tmp_path, folder_for_file)
    _warm_equals_cold(tmp_path, lambda: (repo / "pdf/data").mkdir())
    _warm_equals_cold(tmp_path, lambda: (repo / "csv/notes.pyc").write_text(
        "GITHUB_TOKEN=ghp_Zq8rT2mW9xLkP4vB7nC1sD6fG3hJ0yUe5aQi\n"))
    assert "csv" in [s["id"] for s in json.loads((tmp_path / "out/api/skills.json").read_text())["skills"]]
    assert not any(b"ghp_Zq8" in p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_a_repository_that_is_one_skill_is_checked_against_the_name_it_is_published_under(tmp_path: Path):
    """S308 compares a skill at a repository's root with the name the bundle publishes it under (the
    archive's or the URL's name), not with its cache folder: a zip's extraction folder is named after
    the archive's hash, a git checkout after its URL and ref. Under the spec profile, where S308 is an
    error, such a repository could never build; and re-zipping the same files with other times
    must rebuild to what a fresh build gives."""
    skill_md = b"---\nname: pdf\ndescription: Does the thing. Use when the user asks for the thing.\n---\n# PDF\n"

    def archive(when: tuple[int, int, int, int, int, int]) -> None:
        with zipfile.ZipFile(tmp_path / "pdf.zip", "w") as zf:
            zf.writestr(zipfile.ZipInfo("SKILL.md", when), skill_md)

    git_repo = tmp_path / "src" / "forms"
    git_repo.mkdir(parents=True)
    (git_repo / "SKILL.md").write_bytes(skill_md.replace(b"name: pdf", b"name: forms"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one skill"]):
        subprocess.run([*git, *cmd], cwd=git_repo, check=True, capture_output=True)
    bare = tmp_path / "forms.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo), str(bare)], check=True, capture_output=True)
    (tmp_path / "skills.toml").write_text(
        '[lint]\nprofile = "spec"\n\n'
        '[[repositories]]\nname = "z"\ntype = "zip"\npath = "pdf.zip"\n\n'
        f'[[repositories]]\nname = "g"\ntype = "git"\nurl = "{bare.as_uri()}"\n')
    archive((2020, 1, 1, 0, 0, 0))
    build_json(tmp_path, "--out", "out", "--no-site")
    manifest = (tmp_path / "out" / "api" / "manifest.json").read_text()
    assert "S308" not in manifest
    assert (tmp_path / "out" / "api" / "skills" / "pdf").is_file() and (tmp_path / "out" / "api" / "skills" / "forms").is_file()
    archive((2021, 1, 1, 0, 0, 0))
    build_json(tmp_path, "--out", "out", "--no-site")
    r = run_skillc("build", "--out", "fresh", "--no-cache", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert_same_tree(tmp_path / "out", tmp_path / "fresh")
