"""The docs site as a catalog (issue 21; issue 19 item 4): provenance people can follow, install
commands for this registry, supporting files as pages, the lint report split, page sizes, and the
catalog data the filters and the search snippets read."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from site_fixture import make_site_repos
from skillc.emit.docsite.provenance import language_of, local_location, view_url


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def site_pages(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.html")
            if p.is_file() and not p.relative_to(out).as_posix().startswith("api/")}


def article(page: str) -> str:
    return page[page.index("<article"):page.index("</article>")]


# --- provenance ---------------------------------------------------------------------------------

@pytest.mark.parametrize("url, expected", [
    ("https://github.com/acme/skills.git", "https://github.com/acme/skills/blob/abc123/skills/pdf/SKILL.md"),
    ("git@github.com:acme/skills.git", "https://github.com/acme/skills/blob/abc123/skills/pdf/SKILL.md"),
    ("https://gitlab.com/acme/team/skills", "https://gitlab.com/acme/team/skills/-/blob/abc123/skills/pdf/SKILL.md"),
    ("ssh://git@codeberg.org/acme/skills.git", "https://codeberg.org/acme/skills/src/commit/abc123/skills/pdf/SKILL.md"),
    ("https://git.internal.example/acme/skills.git", ""),  # an unknown forge: no guessed link
    ("/srv/git/skills.git", ""),  # a local repository
])
def test_view_source_links_name_the_file_at_its_commit(url: str, expected: str):
    assert view_url(url, "abc123", "skills/pdf/SKILL.md") == expected
    assert view_url(url, "", "skills/pdf/SKILL.md") == ""  # no commit resolved: no link


def test_local_paths_are_relative_to_their_configuration_never_absolute():
    assert local_location("/home/ci/work/corpora/anthropics", "/home/ci/work/proj/skills.toml:12", None) \
        == "../corpora/anthropics"
    assert local_location("/home/ci/work/proj/skills", None, "/home/ci/work/proj") == "skills"
    assert local_location("/elsewhere/skills", None, "/home/ci/work/proj") == "../../../../elsewhere/skills"
    assert local_location("team", "/x/skills.toml:1", "/y") == "team"


def test_languages_come_from_pygments():
    assert language_of("references/API.md") == "markdown"
    assert language_of("scripts/run.py") == "python"
    assert language_of("scripts/deploy.sh") == "bash"
    assert language_of("notes.unknown-ext") == "text"


def test_a_site_built_from_paths_outside_the_build_folder_names_no_path_of_the_machine(tmp_path: Path):
    needs_mkdocs()
    repos = make_site_repos(tmp_path / "elsewhere")
    build_dir = tmp_path / "proj"
    build_dir.mkdir()
    r = run_skillc("build", str(repos["team"]), str(repos["vendor"]), "--out", "out", cwd=build_dir,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    pages = site_pages(build_dir / "out")
    leaks = [rel for rel, text in pages.items() if str(tmp_path) in text]
    assert leaks == []
    skill = article(pages["skills/extraction/email/index.html"])
    assert "../elsewhere/team" in skill and "../elsewhere/vendor" in skill  # location and what it shadows


def test_a_git_source_shows_its_commit_and_path(tmp_path: Path):
    needs_mkdocs()
    work = tmp_path / "work"
    write_skill(work, "skills/tools/pdf", description="Read PDFs. Use when a PDF is given.")
    git("init", "-q", "-b", "main", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    commit = git("rev-parse", "HEAD", cwd=work)
    (tmp_path / "skills.toml").write_text(
        '[[repositories]]\nname = "upstream"\ntype = "git"\nurl = "work"\ngit_ref = "main"\nskills_root = "skills"\n')
    r = run_skillc("build", "--out", "out", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    page = article((tmp_path / "out/skills/tools/pdf/index.html").read_text())
    assert commit in page and "skills/tools/pdf/SKILL.md" in page
    assert str(tmp_path) not in page


# --- install commands (issue 19 item 4) ---------------------------------------------------------

def test_install_commands_name_this_registry_and_each_skills_flat_name(tmp_path: Path):
    needs_mkdocs()
    make_site_repos(tmp_path)
    write_skill(tmp_path / "team", "python/testing", description="Test Python. Use when testing Python.")
    write_skill(tmp_path / "team", "js/testing", description="Test JS. Use when testing JavaScript.")
    r = run_skillc("build", "team", "--out", "out", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000",
                        "SKILLC_SITE_URL": "https://acme.example/skills"})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    home = article((out / "index.html").read_text())
    assert "npx skills add https://acme.example/skills/ --skill '*'" in html.unescape(re.sub(r"<[^>]+>", "", home))
    for skill_id, flat in (("extraction/email", "email"), ("python/testing", "python-testing"),
                           ("js/testing", "js-testing")):
        text = re.sub(r"<[^>]+>", "", article((out / f"skills/{skill_id}/index.html").read_text()))
        assert f"npx skills add https://acme.example/skills/ --skill {flat}\n" in text, skill_id
        assert "curl -fLO https://acme.example/skills/api/archives/" in text
        assert "SKILLC_SITE_URL" not in text  # (the placeholder note is for builds without it)


# --- supporting files, lint split, page sizes, catalog data -------------------------------------

def test_references_are_pages_of_the_site_and_stay_inert(tmp_path: Path):
    needs_mkdocs()
    make_site_repos(tmp_path)
    refs = tmp_path / "team/hostile/references"
    (refs / "REFERENCE.md").write_text("---\ntemplate: ../../evil.html\n---\n# Reference\n\n<script>window.__pwned=1</script>\n\n"
                                       "1. Run:\n\n   ```bash\n   make\n   ```\n\nBack to [the skill](../SKILL.md).\n")
    (refs / "tool.py").write_text("def main():\n    return '<script>'\n")
    r = run_skillc("build", "team", "--out", "out", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out/skills/hostile/_files/references"
    ref = article((out / "REFERENCE.md/index.html").read_text())
    assert "<script" not in ref and "&lt;script&gt;" in ref
    assert re.search(r"<li>\s*<p>Run:</p>\s*<div class=\"language-bash highlight\">", ref)  # the fence in the list
    assert "template: ../../evil.html" in ref  # its front matter is text, never the page's settings
    tool = article((out / "tool.py/index.html").read_text())
    assert '<span class="k">def</span>' in tool and "&lt;script&gt;" in tool
    skill = article((tmp_path / "out/skills/hostile/index.html").read_text())
    assert 'href="_files/references/tool.py/"' in skill


def test_pages_stay_small_when_the_catalog_is_large(tmp_path: Path):
    """300 skills in one collection: every page under 50 KB; the filters' data in chunks."""
    needs_mkdocs()
    for i in range(300):
        write_skill(tmp_path / "big", f"pack/skill-{i:03d}",
                    description=f"Skill number {i} does a thing at length. " * 4 + "Use when asked.")
    r = run_skillc("build", "big", "--out", "out", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    sizes = {rel: len(text.encode()) for rel, text in site_pages(out).items()}
    assert max(sizes.values()) < 50_000, max(sizes.items(), key=lambda kv: kv[1])
    assert "collections/pack/~6/index.html" in sizes  # the collection's skills, paged
    head = json.loads((out / "assets/skillc/catalog/index.json").read_text())
    assert head["total"] == 300 and len(head["chunks"]) == 2
    rows = json.loads((out / "assets/skillc/catalog/000.json").read_text())["skills"]
    assert rows[0][:2] == ["pack/skill-000", "skill-000"] and len(rows) == head["chunk_size"]


# --- incremental site builds --------------------------------------------------------------------

def _inodes(out: Path) -> dict[str, int]:
    """The site's pages in a bundle by their inode: a page rendered again is a new file (never
    written in place), one kept is the same file as in the bundle before."""
    return {p.relative_to(out).as_posix(): p.stat().st_ino for p in out.rglob("*.html")
            if not p.relative_to(out).as_posix().startswith("api/")}


def test_one_changed_skill_renders_only_its_pages_and_matches_a_clean_build(tmp_path: Path):
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    out = tmp_path / "out"
    before = _inodes(out)
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    # (the same length: the cards on the lists show each skill's size and token estimate)
    skill.write_text(skill.read_text().replace("Roll out the release", "Roll out the RELEASE"))
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    rendered = sorted(rel for rel, inode in _inodes(out).items() if before.get(rel) != inode)
    # The changed skill's page: nothing else shows the body (the 404 page shows only the theme and nav).
    assert rendered == ["skills/deploy-helper/index.html"], rendered
    assert "Roll out the RELEASE" in (tmp_path / "out/skills/deploy-helper/index.html").read_text()
    # Byte for byte what a clean build of the same inputs writes.
    clean = tmp_path / "clean"
    clean.mkdir()
    for name in ("team", "vendor"):
        subprocess.run(["cp", "-r", str(tmp_path / name), str(clean / name)], check=True)
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=clean,
                   env={**env, "SKILLC_CACHE_DIR": str(clean / "cache")})
    assert r.returncode == 0, r.stderr
    a, b = site_pages(tmp_path / "out"), site_pages(clean / "out")
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
    # A changed description reaches the lists that show it (home, catalog, collection), and only them.
    before = _inodes(out)
    skill.write_text(skill.read_text().replace("Deploy services to production.", "Deploy services with Argo!!."))
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    rendered = sorted(rel for rel, inode in _inodes(out).items() if before.get(rel) != inode)
    assert rendered == ["all/index.html", "collections/index.html", "index.html",
                        "skills/deploy-helper/index.html"], rendered
    assert "Deploy services with Argo!!." in (tmp_path / "out/index.html").read_text()
    # ...and the filters' data: its catalog chunk is encoded again (keyed by its skills' digests).
    assert "Deploy services with Argo!!." in (tmp_path / "out/assets/skillc/catalog/000.json").read_text()


def test_a_page_that_shows_another_part_of_the_model_is_rendered_again_when_that_part_changes(tmp_path: Path):
    """A page is rendered again only when its key changes (``pages.Planned``): a collection's page
    shows its sub-collections' descriptions, so a changed sub-collection renders its parent's page
    again, and the site stays byte-identical to a clean build."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    (tmp_path / "team/extraction/medical/COLLECTION.md").write_text("Medical notes\n", encoding="utf-8")
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    (tmp_path / "team/extraction/medical/COLLECTION.md").write_text("Clinical notes\n", encoding="utf-8")
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "Clinical notes" in (tmp_path / "out/collections/extraction/index.html").read_text()
    _clean_bundle(tmp_path, env)
    a, b = site_files(tmp_path / "out"), site_files(tmp_path / "clean/out")
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []


def site_files(out: Path) -> dict[str, bytes]:
    """Every file of the site (the bundle's API left out), as bytes."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
            and not p.relative_to(out).as_posix().startswith(("api/", ".well-known/", "_routing/"))}


def test_a_rebuild_never_changes_a_byte_of_the_previous_bundle(tmp_path: Path):
    """The kept mkdocs output is hard-linked into each bundle; a rebuild (which mkdocs writes into
    that kept output) must leave every file of the bundle built before it as it was: it may still
    be served while the new one is built."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    kept = next((tmp_path / "cache/emit/site").iterdir()) / "site"
    witness, before = tmp_path / "witness", {}
    for path in (tmp_path / "out").rglob("*"):
        rel = path.relative_to(tmp_path / "out").as_posix()
        if path.is_file() and not rel.startswith(("api/", ".well-known/", "_routing/")):
            (witness / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(path, witness / rel)  # the same inode as the bundle's file
            before[rel] = path.read_bytes()
    assert os.path.samefile(tmp_path / "out/index.html", kept / "index.html")  # (linked, not copied)
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    for old, new in (("Roll out the release", "Roll out the RELEASE"), ("Deploy services to production.", "Deploy!")):
        skill.write_text(skill.read_text().replace(old, new))
        r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        changed = sorted(rel for rel, data in before.items() if (witness / rel).read_bytes() != data)
        assert changed == [], changed
    assert "Deploy!" in (tmp_path / "out/index.html").read_text() and "Deploy!" not in before["index.html"].decode()


@pytest.mark.parametrize("value", ["plain", 'a "q" \\ b', "tab\there", "line\nbreak", "\x00\x07\x7f\x85\u2028\u2029",
                                   "\ufeff\ud7ff\U0001F600 é 中", "'single' : # - [ ] { } & * ! | > % @ `"])
def test_front_matter_reads_back_exactly_what_was_written(value: str):
    import yaml

    from skillc.emit.docsite.pages import front_matter

    text = front_matter(skillc_title=value)
    assert yaml.safe_load(text.strip().strip("-"))["skillc_title"] == value


# --- recycled trees: the generation before last is brought up to date, not rebuilt ---------------

def _bundle(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def _clean_bundle(tmp_path: Path, env: dict[str, str]) -> dict[str, bytes]:
    """The bundle a clean build of the same inputs (fresh cache, no earlier generation) writes."""
    clean = tmp_path / "clean"
    clean.mkdir()
    for name in ("team", "vendor"):
        subprocess.run(["cp", "-r", str(tmp_path / name), str(clean / name)], check=True)
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=clean, env={**env, "SKILLC_CACHE_DIR": str(clean / "cache")})
    assert r.returncode == 0, r.stderr
    return _bundle(clean / "out")


def _two_builds(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """Two builds (the second after a change): the first one's bundle is then the recycled generation."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    skill.write_text(skill.read_text().replace("Roll out the release", "Roll out the RELEASE"))
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    recycled = tmp_path / ".skillc-build/out.prev"
    assert (recycled / ".well-known/skills/deploy-helper/SKILL.md").is_file() and (recycled / "index.html").is_file()
    return env, recycled


def test_a_rebuild_after_a_skill_is_removed_or_renamed_leaves_nothing_stale_and_equals_a_clean_build(tmp_path: Path):
    env, recycled = _two_builds(tmp_path)
    # Folders of an unchanged skill in the recycled generation: kept (the same folders), not made again.
    folders = {rel: (recycled / rel).stat().st_ino for rel in (".well-known/skills/vendor-only", "skills/vendor-only")}
    shutil.rmtree(tmp_path / "team/.curated/gh-fix")  # removed
    os.rename(tmp_path / "team/deploy-helper", tmp_path / "team/ship-helper")  # renamed
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert {rel: (out / rel).stat().st_ino for rel in folders} == folders
    stale = sorted(rel for rel in _bundle(out) if "gh-fix" in rel or "deploy-helper" in rel)
    assert stale == [], stale
    assert (out / ".well-known/skills/ship-helper/SKILL.md").is_file() and (out / "skills/ship-helper/index.html").is_file()
    listed = {f["path"] for f in json.loads((out / "api/manifest.json").read_text())["files"]}
    assert listed | {"api/manifest.json"} == set(_bundle(out))  # the manifest lists exactly what is there
    a, b = _bundle(out), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
    assert not (tmp_path / ".skillc-build/out.tmp-held").exists() and not [
        p.name for p in (tmp_path / ".skillc-build").iterdir() if ".tmp-" in p.name]


def test_the_first_rebuild_moves_the_kept_output_in_and_equals_a_clean_build(tmp_path: Path):
    """The generation to recycle has no site (the build before was ``--no-site``): the rebuild
    renders into the clean build's kept output, moved into the bundle; no folder is made."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", "--no-site", cwd=tmp_path, env=env).returncode == 0
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    assert not (tmp_path / ".skillc-build/out.prev/index.html").exists()  # (the generation to recycle: no site)
    from skillc.emit.docsite.incremental import state_dir

    out = tmp_path / "out"
    kept = state_dir(tmp_path / "cache/emit", out) / "site"
    folder = (kept / "skills/vendor-only").stat().st_ino
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    skill.write_text(skill.read_text().replace("Roll out the release", "Roll out the RELEASE"))
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert not kept.exists() and (out / "skills/vendor-only").stat().st_ino == folder
    # (the page is the file the bundle before it shows: never written, only moved)
    assert os.path.samefile(out / "skills/vendor-only/index.html",
                            tmp_path / ".skillc-build/out.prev/skills/vendor-only/index.html")
    assert "RELEASE" in (out / "skills/deploy-helper/index.html").read_text()
    listed = {f["path"] for f in json.loads((out / "api/manifest.json").read_text())["files"]}
    assert listed | {"api/manifest.json"} == set(_bundle(out))
    a, b = _bundle(out), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
    assert [p.name for p in (tmp_path / ".skillc-build").iterdir() if ".tmp-" in p.name] == []


def test_a_recycled_file_whose_bytes_were_altered_is_replaced(tmp_path: Path):
    env, recycled = _two_builds(tmp_path)
    folder = (recycled / "skills/vendor-only").stat().st_ino
    for rel in (".well-known/skills/vendor-only/SKILL.md", "skills/vendor-only/index.html", "index.html"):
        (recycled / rel).unlink()  # (a new inode: the visible bundle's file is not touched)
        (recycled / rel).write_bytes(b"tampered\n")
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert os.path.samefile(out / ".well-known/skills/vendor-only/SKILL.md", out / "api/files/vendor-only/SKILL.md")
    assert (out / "skills/vendor-only").stat().st_ino == folder  # (the recycled folder, its file replaced)
    a, b = _bundle(out), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []


def test_a_build_without_the_site_after_builds_with_it_drops_the_recycled_site(tmp_path: Path):
    """The held site is reclaimed only by the site emitter: without it, nothing of it is published."""
    env, recycled = _two_builds(tmp_path)
    r = run_skillc("build", "team", "vendor", "--out", "out", "--no-site", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert not (out / "index.html").exists() and not (out / "skills").exists()
    assert (out / ".well-known/skills/vendor-only/SKILL.md").is_file()
    listed = {f["path"] for f in json.loads((out / "api/manifest.json").read_text())["files"]}
    assert listed | {"api/manifest.json"} == set(_bundle(out))
    assert [p.name for p in (tmp_path / ".skillc-build").iterdir() if ".tmp-" in p.name] == []


def test_every_rebuild_of_a_chain_equals_a_clean_build_whichever_tree_it_brings_up_to_date(tmp_path: Path):
    """Builds with and without the site, each after a change: the rebuild renders into the kept
    output (after a clean build), the recycled generation's site (two builds old: what the build
    between changed is rendered again too) or, when neither holds, the visible bundle's site linked
    in; each bundle is byte for byte a clean build's."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    out = tmp_path / "out"
    steps = [("Roll out the release", "Roll out the RELEASE", ()), ("Deploy services to production.", "Deploy!", ()),
             ("RELEASE", "Release", ("--no-site",)), ("Deploy!", "Deploy now!", ()), ("Release", "RELEASE!", ())]
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    for step, (old, new, extra) in enumerate(steps):
        skill.write_text(skill.read_text().replace(old, new))
        r = run_skillc("build", "team", "vendor", "--out", "out", *extra, cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        if extra:
            continue
        listed = {f["path"] for f in json.loads((out / "api/manifest.json").read_text())["files"]}
        assert listed | {"api/manifest.json"} == set(_bundle(out)), step
        a, b = _bundle(out), _clean_bundle(tmp_path, env)
        shutil.rmtree(tmp_path / "clean")
        assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == [], step
        assert [p.name for p in (tmp_path / ".skillc-build").iterdir() if ".tmp-" in p.name] == []


def test_a_recycled_site_whose_theme_file_was_altered_is_not_brought_up_to_date(tmp_path: Path):
    """A file of the recycled site that no page makes (a theme file) is not what its generation
    wrote: that tree is left to be deleted, and the visible bundle's site is linked in instead."""
    env, recycled = _two_builds(tmp_path)
    theme = next(p for p in (recycled / "assets/stylesheets").iterdir() if p.suffix == ".css")
    theme.unlink()
    theme.write_text("body { display: none }\n")
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    skill.write_text(skill.read_text().replace("Deploy services to production.", "Deploy!"))
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert os.path.samefile(out / "skills/vendor-only/index.html",
                            tmp_path / ".skillc-build/out.prev/skills/vendor-only/index.html")
    a, b = _bundle(out), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []


def test_the_history_names_what_was_written_since_a_generation_and_keeps_only_recent_tables(tmp_path: Path):
    from skillc.emit.docsite.incremental import (
        HISTORY_LENGTH,
        TABLES,
        read_history,
        remember,
        since,
        table_path,
    )

    remember(tmp_path, "k0", [], [], {"index.html": (1, 2, 3, "a" * 64)}, fresh=True)
    remember(tmp_path, "k1", ["docs/a.md"], ["docs/gone.md"], {}, fresh=False)
    remember(tmp_path, "k2", ["docs/b.md"], [], {}, fresh=False)
    history = read_history(tmp_path)
    assert since(history, "k0") == ({"docs/a.md", "docs/b.md"}, {"docs/gone.md"})
    assert since(history, "k2") == (set(), set()) and since(history, "other") is None
    assert json.loads(table_path(tmp_path, "k0").read_text()) == {"index.html": [1, 2, 3, "a" * 64]}
    for i in range(3, 3 + HISTORY_LENGTH):
        remember(tmp_path, f"k{i}", [], [], {}, fresh=False)
    assert since(read_history(tmp_path), "k0") is None  # (too old: its tree is not used)
    assert sorted(p.name for p in (tmp_path / TABLES).iterdir()) == sorted(
        table_path(tmp_path, f"k{i}").name for i in range(3, 3 + HISTORY_LENGTH))
    remember(tmp_path, "k9", [], [], {}, fresh=True)  # (a clean build: the history starts again)
    assert [row[0] for row in read_history(tmp_path)] == ["k9"]


def test_after_a_build_that_changed_many_pages_the_visible_site_is_linked_in_rather_than_rendered_again(
        tmp_path: Path):
    """The recycled generation is two builds old: after a build that rewrote most pages, bringing it
    up to date would render them all again, so the visible bundle's site is linked in instead."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    for skill in sorted((tmp_path / "team").rglob("SKILL.md")) + sorted((tmp_path / "vendor").rglob("SKILL.md")):
        skill.write_text(skill.read_text().replace("description: ", "description: Now ", 1))
    assert run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env).returncode == 0
    recycled = tmp_path / ".skillc-build/out.prev"  # (the clean build's: every page of it is stale)
    folder = (recycled / "skills/vendor-only").stat().st_ino
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    skill.write_text(skill.read_text().replace("Roll out the release", "Roll out the RELEASE"))
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert (out / "skills/vendor-only").stat().st_ino != folder  # (not the recycled tree's folder)
    assert os.path.samefile(out / "skills/vendor-only/index.html",  # (the page the build before rendered)
                            tmp_path / ".skillc-build/out.prev/skills/vendor-only/index.html")
    a, b = _bundle(out), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []


def test_without_the_output_folder_a_rebuild_renders_into_the_kept_output_and_keeps_it(tmp_path: Path):
    """CI that keeps only the cache: each run starts without the output folder and its work area.
    The kept output is then rendered into and linked, never moved away, so every such run stays
    incremental; the bundle equals a clean build."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    from skillc.emit.docsite.incremental import state_dir

    kept = state_dir(tmp_path / "cache/emit", tmp_path / "out") / "site"
    skill = tmp_path / "team/deploy-helper/SKILL.md"
    for old, new in (("", ""), ("Roll out the release", "Roll out the RELEASE"), ("RELEASE", "REL-ASE")):
        skill.write_text(skill.read_text().replace(old, new) if old else skill.read_text())
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        shutil.rmtree(tmp_path / ".skillc-build", ignore_errors=True)
        # (inode and time: a page written again may reuse its old file's inode, which nothing else links now)
        before = {p.relative_to(kept).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns) for p in kept.rglob("*.html")}
        r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        after = {p.relative_to(kept).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns) for p in kept.rglob("*.html")}
        if before:  # (the runs after the first: only the changed skill's page rendered again)
            assert sorted(rel for rel in after if before.get(rel) != after[rel]) == ["skills/deploy-helper/index.html"]
        assert os.path.samefile(tmp_path / "out/index.html", kept / "index.html")
    a, b = _bundle(tmp_path / "out"), _clean_bundle(tmp_path, env)
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
