"""Per-skill outputs of `skillc build`: what goes into each skill's zip, and files that change mid-build."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from pathlib import Path

import pytest

from bundle_contract import build_env
from conftest import run_skillc, write_skill
from skillc.emit.common import shown_location

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(range(256)) * 8


def _repo(root: Path) -> Path:
    skill = write_skill(root, "tools/packer", body="# Packer\n\nRun `scripts/pack.sh`; see the logo.\n").parent
    (skill / "scripts").mkdir()
    (skill / "scripts/pack.sh").write_text("#!/bin/sh\necho packed\n")
    (skill / "scripts/pack.sh").chmod(0o755)
    (skill / "assets").mkdir()
    (skill / "assets/logo.png").write_bytes(PNG)
    (skill / "notes.md").write_text("# Notes\n\n" + "Repeated words compress well. " * 200 + "\n")
    (skill / "__pycache__").mkdir()
    (skill / "__pycache__/x.pyc").write_bytes(b"\0junk")
    return root


def test_zip_members_modes_and_compression(tmp_path: Path):
    _repo(tmp_path / "repo")
    r = run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=build_env(tmp_path))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    with zipfile.ZipFile(out / "api/archives/tools/packer.zip") as zf:
        infos = {i.filename: i for i in zf.infolist()}
        assert list(infos) == sorted(infos, key=str.encode)  # byte order
        assert set(infos) == {"packer/SKILL.md", "packer/assets/logo.png", "packer/notes.md", "packer/scripts/pack.sh"}
        assert stat.S_IMODE(infos["packer/scripts/pack.sh"].external_attr >> 16) == 0o755
        assert stat.S_IMODE(infos["packer/notes.md"].external_attr >> 16) == 0o644
        assert infos["packer/assets/logo.png"].compress_type == zipfile.ZIP_STORED  # compressed already
        assert infos["packer/notes.md"].compress_type == zipfile.ZIP_DEFLATED
        assert infos["packer/notes.md"].compress_size < infos["packer/notes.md"].file_size // 10
        for name in infos:  # the zip holds the published bytes
            assert zf.read(name) == (out / "api/files/tools/packer" / name.split("/", 1)[1]).read_bytes()
    # The discovery index points at the same files, the skill folder at the archive's root, with its digest.
    rooted = (out / "api/discovery/tools/packer.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(rooted)) as zf:
        assert sorted(zf.namelist()) == sorted(n.split("/", 1)[1] for n in infos)
        assert stat.S_IMODE(zf.getinfo("scripts/pack.sh").external_attr >> 16) == 0o755
    index = json.loads((out / ".well-known/agent-skills/index.json").read_text())
    entry = next(e for e in index["skills"] if e["id"] == "tools/packer")
    assert entry["url"] == "../../api/discovery/tools/packer.zip"
    assert entry["digest"] == "sha256:" + hashlib.sha256(rooted).hexdigest()


def test_a_file_changed_after_listing_fails_the_build_cleanly(tmp_path: Path):
    """What render publishes is checked against the hash the file was listed (and manifested) with."""
    from skillc.build.pipeline import BuildOptions
    from skillc.config.build import load_build_config
    from skillc.emit.skills import render_skill
    from skillc.emit.staging import Staging
    from skillc.errors import BuildError
    from skillc.resolve_types import EmitContext, Resolution
    from skillc.sources import open_source

    repo = _repo(tmp_path / "repo")
    opts = BuildOptions(paths=(str(repo),), cwd=tmp_path)
    cfg = load_build_config(opts.paths, None, cwd=tmp_path, home=tmp_path, env={})
    (skill,) = open_source(cfg.repositories[0], cache_dir=tmp_path / "c", lint=cfg.lint).skills().skills
    (repo / "tools/packer/notes.md").write_text("# Notes\n\nEdited after the listing.\n")
    out = tmp_path / "staging"
    ctx = EmitContext(Resolution((skill,), (), (), (), ()), out, 0.0)
    with pytest.raises(BuildError, match="notes.md changed while the build was reading it"):
        render_skill(ctx, Staging(out), skill)


def test_skill_zip_writes_what_zipfile_writes():
    """The zip writer is byte for byte the ``zipfile`` one (names ASCII or not, empty, stored and
    deflated members, executable bits, any SOURCE_DATE_EPOCH), and ``zipfile`` reads it back."""
    import random

    from skillc.emit.skills import skill_zip, zipfile_skill_zip

    rng = random.Random(20261122)
    names = ["pkg/SKILL.md", "pkg/assets/logo.png", "pkg/références/é.md", "pkg/scripts/run.sh", "pkg/empty",
             "pkg/data/archive.ZIP", "pkg/notes.txt"]
    for _ in range(300):
        members = []
        for name in rng.sample(names, rng.randint(0, len(names))):
            noise = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 400)))
            # sizes on both sides of every deflate window size the writer picks (512 B to 32 KiB)
            data = noise if rng.random() < 0.3 else b"words that repeat " * rng.randint(0, 3000)
            if rng.random() < 0.3:  # lengths near a window size (plus zlib's 262-byte lookahead)
                size = max(0, 2 ** rng.randint(9, 15) + rng.randint(-300, 300) - 262)
                data = bytes(rng.choice(b"abcdefgh \n#") for _ in range(size))
            members.append((name, data, rng.random() < 0.3))
        epoch = rng.choice([0, 1_700_000_000, 315_532_800, 4_354_819_198])
        data = skill_zip(members, epoch)
        assert data == zipfile_skill_zip(members, epoch)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            assert zf.testzip() is None
            assert {i.filename: zf.read(i) for i in zf.infolist()} == {n: d for n, d, _ in members}
    # A member that would deflate past the ratio import refuses as a zip bomb is stored, by both.
    members = [("pkg/SKILL.md", b"---\nname: pkg\n---\n", False), ("pkg/assets/blank.csv", b"," * 30 + b"\n", False),
               ("pkg/assets/big.csv", (b"," * 30 + b"\n") * 40_000, False)]
    data = skill_zip(members, 0)
    assert data == zipfile_skill_zip(members, 0)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        kinds = {i.filename: i.compress_type for i in zf.infolist()}
    assert kinds == {"pkg/SKILL.md": zipfile.ZIP_DEFLATED, "pkg/assets/blank.csv": zipfile.ZIP_DEFLATED,
                     "pkg/assets/big.csv": zipfile.ZIP_STORED}


def test_the_bundle_publishes_only_names_its_archives_can_import(tmp_path):
    """A name with ':' (Windows cannot hold it), a case twin of another file or of SKILL.md (macOS
    and Windows merge them): withheld and listed, so the skill's zip imports; the rest published."""
    skill = write_skill(tmp_path / "repo", "odd").parent
    (skill / "references").mkdir()
    for name, text in (("references/v1:notes.md", "a"), ("references/Notes.md", "b"), ("references/notes.md", "c"),
                       ("skill.md", "d"), ("Refs/x.md", "e"), ("refs/y.md", "f")):
        (skill / name).parent.mkdir(parents=True, exist_ok=True)
        (skill / name).write_text(text + "\n")
    r = run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "dist/api/manifest.json").read_text())
    assert sorted(w["path"] for w in manifest["withheld"]) == [
        "references/notes.md", "references/v1:notes.md", "refs/y.md", "skill.md"]
    assert sorted(p.relative_to(tmp_path / "dist/api/files/odd").as_posix()
                  for p in (tmp_path / "dist/api/files/odd").rglob("*") if p.is_file()) == [
        "Refs/x.md", "SKILL.md", "references/Notes.md"]
    r = run_skillc("import", str(tmp_path / "dist/api/archives/odd.zip"), "--into", str(tmp_path / "imported"))
    assert r.returncode == 0, r.stderr


def test_the_archive_limits_import_enforces_are_withheld_at_build(tmp_path):
    """A path whose archive entry (with the skill's folder in front) passes 1,024 bytes, and the files
    past 10,000 entries, are withheld and listed: the skill's zip still imports."""
    skill = write_skill(tmp_path / "repo", "longskill").parent
    deep = skill / "/".join(["d" * 250] * 4)  # 1,003 bytes with its slashes: under 1,024 alone
    deep.mkdir(parents=True)
    (deep / ("n" * 16)).write_text("x\n")
    many = write_skill(tmp_path / "repo", "many").parent
    (many / "f").mkdir()
    for i in range(10_000):
        (many / f"f/{i:05d}").write_bytes(b"")
    r = run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    withheld = {w["id"]: w for w in json.loads((tmp_path / "dist/api/manifest.json").read_text())["withheld"]}
    assert "path over 1024 bytes" in withheld["longskill"]["reason"]
    assert withheld["many"]["path"] == "f/09999" and "10,000 entries" in withheld["many"]["reason"]
    for skill_id in ("longskill", "many"):
        r = run_skillc("import", str(tmp_path / f"dist/api/archives/{skill_id}.zip"), "--into", str(tmp_path / "in"))
        assert r.returncode == 0, (skill_id, r.stderr)


def test_a_repository_url_is_shown_without_credentials_query_or_fragment():
    """The manifest and the site show where each repository came from: a presigned download link
    carries its key id and signature in the query, which were published as written."""
    url = ("https://bucket.s3.amazonaws.com/dl/pdf.zip?X-Amz-Credential=AKIAIOSFODNN7EXAMPL3/20240101/"
           "us-east-1/s3/aws4_request&X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7#x")
    assert shown_location("zip", url, None) == "https://bucket.s3.amazonaws.com/dl/pdf.zip"
    assert shown_location("git", "https://user:pa55@example.com/r.git?ref=x", None) == "https://example.com/r.git"
    assert shown_location("http", "https://example.com/skills/", None) == "https://example.com/skills/"


def test_a_reclaimed_tree_keeps_the_right_inodes_replaces_the_others_and_drops_what_is_gone(tmp_path: Path):
    """``Staging.reclaim``/``link_file``/``settle``: the recycled generation's tree is brought up to
    date file by file; a replaced file is never written through (the visible bundle shares it)."""
    import os

    from skillc.emit.staging import Staging

    src, held, out, visible = tmp_path / "src", tmp_path / "held", tmp_path / "out", tmp_path / "visible"
    for d in (src, held / "t/old", out, visible):
        d.mkdir(parents=True)
    for name in ("same", "other", "new"):
        (src / name).write_text(f"{name} now\n")
    os.link(src / "same", held / "t/same")  # already the right inode
    (held / "t/other").write_text("other before\n")
    os.link(held / "t/other", visible / "other")  # the visible bundle shares it
    (held / "t/gone").write_text("gone\n")
    (held / "t/old/gone").write_text("gone\n")
    entries = {rel: ("x", 1) for rel in ("t/same", "t/other", "t/gone", "t/old/gone")}
    staging = Staging(out, held=held, held_entries=entries)
    folder = (held / "t").stat().st_ino
    assert staging.reclaim("t") and not staging.reclaim("elsewhere")
    for name in ("same", "other", "new"):
        staging.link_file(str(src / name), f"t/{name}")
    assert staging.settle() == 2
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["t", "t/new", "t/other", "t/same"]
    assert (out / "t").stat().st_ino == folder and staging.kept == 1 and staging.linked == 2
    assert all(os.path.samefile(out / "t" / n, src / n) for n in ("same", "other", "new"))
    assert (visible / "other").read_text() == "other before\n"


def test_a_visible_file_is_linked_only_when_it_holds_the_bytes_asked_for(tmp_path: Path):
    """``Staging.provide`` outside the recycled generation: the visible bundle's file is checked by
    its bytes (a few files) or by its manifest (past ``CHECK_BUDGET``, read once); a file with other
    bytes, a link, or a missing one is never linked, and the caller produces it."""
    import hashlib
    import os

    from skillc.emit import staging as staging_module
    from skillc.emit.staging import Staging

    visible, out = tmp_path / "visible", tmp_path / "out"
    (visible / "api/files/a").mkdir(parents=True)
    out.mkdir()
    (visible / "api/files/a/SKILL.md").write_bytes(b"now\n")
    (tmp_path / "elsewhere").write_bytes(b"now\n")
    os.symlink(tmp_path / "elsewhere", visible / "api/files/a/link.md")
    now = (hashlib.sha256(b"now\n").hexdigest(), 4)
    before = (hashlib.sha256(b"old\n").hexdigest(), 4)
    read = []

    def manifest():
        read.append(1)
        return {"api/files/a/SKILL.md": now, "api/files/a/link.md": now}

    staging = Staging(out, recycled={"api/files/b/SKILL.md": before}, current_dir=visible, load_current=manifest)
    assert not staging.provide("api/files/a/SKILL.md", before)  # other bytes than asked for
    assert not staging.provide("api/files/a/link.md", now)  # a link is never followed
    assert not staging.provide("api/files/a/gone.md", now)
    assert staging.provide("api/files/a/SKILL.md", now) and not read
    assert os.path.samefile(out / "api/files/a/SKILL.md", visible / "api/files/a/SKILL.md")
    assert staging.linked == 1
    (out / "api/files/a/SKILL.md").unlink()
    staging._checked = staging_module.CHECK_BUDGET  # past the budget: the manifest answers
    assert staging.provide("api/files/a/SKILL.md", now) and read == [1]
    assert not staging.provide("api/files/a/SKILL.md", before) and read == [1]


def test_a_rebuild_compresses_only_the_files_that_changed(tmp_path: Path):
    """The ``.gz`` copies (``emit.precompressed``) are records of the build cache's ``gzip`` table,
    keyed by their source's hash: each copy is its source's bytes compressed, and the cache keeps
    exactly the copies the last bundle holds (a rebuild reuses them instead of compressing again)."""
    import gzip
    import pickle

    for i in range(40):
        write_skill(tmp_path / "repo", f"pack/skill-{i:02d}", description=f"Skill {i} packs things at length. " * 3)
    env = build_env(tmp_path)
    assert run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env).returncode == 0
    write_skill(tmp_path / "repo", "pack/skill-07", description="Skill 7 now unpacks. Use when unpacking.")
    assert run_skillc("build", "repo", "--out", "out", "--no-site", cwd=tmp_path, env=env).returncode == 0
    out = tmp_path / "out"
    copies = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.gz")}
    assert len(copies) > 2
    for rel, data in copies.items():
        assert gzip.decompress(data) == (out / rel[:-len(".gz")]).read_bytes(), rel
    records: dict = {}
    for name in ("gzip.pickle", "gzip.delta.pickle"):  # (the table, then what this build added)
        path = Path(env["SKILLC_CACHE_DIR"]) / "records" / name
        if path.is_file():
            records.update(pickle.loads(path.read_bytes())[2])
    expected = {hashlib.sha256((out / rel[:-len(".gz")]).read_bytes()).hexdigest(): data for rel, data in copies.items()}
    assert records == expected
