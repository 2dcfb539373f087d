"""Build every real repository in ../shared/corpora as a user would (the installed `skillc build
CORPUS --keep-going --no-site --json`) and check the bundle from the outside, with the standard
library only: exit code and JSON summary, the manifest against the files on disk (path, size,
SHA-256), the skills list against the per-skill documents, the collections' counts, the Agent
Skills discovery index (per-file digests, the skill digest over sorted ``path\\0hex\\n`` lines, the
package zip's digest) and the zips themselves.

How the published/excluded counts were checked (not with the build's code): ``skillc lint CORPUS
--format json`` (default profile, the one build uses) was run on each corpus; its ``summary.skills``
equals published + excluded below, and the set of skills with at least one ``error`` diagnostic is
exactly the build's ``excluded`` list (``--keep-going`` leaves out a skill whose published copy has
a lint error and publishes every other one). Those skill counts are also test_lint_corpora.py's
(2,428 for openclaw: its 2,451 SKILL.md files minus the 23 fixtures under a skill's ``references/``).

* K-Dense: 134 skills; ``scientific-skills/database-lookup`` has a description over 1,024
  characters (S311, the 1,929-character one research/corpora.md mentions) → 133 + 1.
* anthropics: 14 skills; ``skills/claude-api`` has a 1,068-character description (S311) → 13 + 1.
* openclaw: 2,428 skills, 254 of them with an error (no frontmatter P201 on 132, YAML errors P209
  on 47, bad names S304/S307, never-closed frontmatter P202, a credential in SKILL.md B707, …;
  ``manifest.excluded`` gives the codes per skill) → 2,174 + 254.
* every other corpus: no lint error, every skill published.

Run alone: ``python -m pytest -q tests/test_build_corpora.py -p no:xdist`` (20-25 s of tests here, most
of it building openclaw).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path
from urllib.parse import quote, urljoin

import pytest

from conftest import run_skillc
from skillc.activecontent import REASON as ACTIVE_REASON

# corpus: (published skills, excluded skills, collections)
EXPECTED = {
    "K-Dense-AI__claude-scientific-skills": (133, 1, 1),
    "anthropics__skills": (13, 1, 1),
    "expo__skills": (26, 0, 7),
    "getsentry__skills": (27, 0, 1),
    "github__awesome-copilot": (419, 0, 8),
    "hashicorp__agent-skills": (17, 0, 14),
    "mattpocock__skills": (41, 0, 7),
    "obra__superpowers": (14, 0, 1),
    "openai__skills": (10, 0, 4),
    "openclaw__skills": (2173, 255, 875),  # (paul-phan/crisp: a 64-hex CRISP_TOKEN_KEY in its README, issue 17)
    "trailofbits__skills": (80, 0, 83),
    "wshobson__agents": (181, 0, 101),
}
EXCLUDED_IDS = {
    "K-Dense-AI__claude-scientific-skills": ["scientific-skills/database-lookup"],
    "anthropics__skills": ["skills/claude-api"],
}
SLOW = {"openclaw__skills", "github__awesome-copilot"}
# openclaw stores 25 skills as `skill.md` (published under that name, listed first all the same).
LOWERCASE_MAIN = {"openclaw__skills": 25}


def _params():
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in EXPECTED]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Build a corpus once per module (fresh cache, hermetic HOME and folder); returns
    (process, parsed --json summary, bundle folder)."""
    done: dict[str, tuple] = {}

    def _build(corpora: Path, name: str):
        if name not in done:
            corpus = corpora / name
            if not corpus.is_dir():
                pytest.skip(f"{name} is not in this checkout of the corpora")
            work = tmp_path_factory.mktemp(name)
            out = work / "dist"
            env = {"SKILLC_CACHE_DIR": str(work / "cache"), "HOME": str(work)}
            proc = run_skillc("build", str(corpus), "--out", str(out), "--no-site", "--keep-going", "--json",
                              cwd=work, env=env)
            summary = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
            done[name] = (proc, summary, out)
        return done[name]

    return _build


@pytest.mark.parametrize("name", _params())
def test_build_corpus(corpora: Path, build, name: str):
    proc, summary, out = build(corpora, name)
    published, excluded, collections = EXPECTED[name]
    _check_command(name, proc, summary, published, excluded, collections)
    manifest = _check_manifest(out, summary, published, excluded)
    ids = _check_skill_documents(out, summary, published)
    _check_collections(out, ids, collections)
    _check_discovery_index(out, manifest, ids)


def _check_command(name: str, proc, summary, published: int, excluded: int, collections: int) -> None:
    """The command: exit 0 with --keep-going, no internal error, a coherent JSON summary."""
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:], proc.stdout[-2000:])
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream and "internal error" not in stream.lower()
    assert summary is not None and summary["ok"] is True, proc.stdout[:2000]
    assert summary["skills"] == published
    assert len(summary["excluded"]) == excluded
    assert summary["collections"] == collections
    assert summary["shadowed"] == 0  # one repository: nothing to shadow
    if name in EXCLUDED_IDS:
        assert summary["excluded"] == EXCLUDED_IDS[name]
    # every skill lint sees was read, and each is either published or excluded
    assert summary["parsed"] == summary["linted"] == published + excluded



def _check_manifest(out: Path, summary, published: int, excluded: int) -> dict:
    """The manifest agrees with the summary, and lists every file of the bundle but itself."""
    manifest = json.loads((out / "api/manifest.json").read_text("utf-8"))
    assert manifest["kind"] == "skillc-bundle"
    assert manifest["skills"] == published
    assert sorted(e["id"] for e in manifest["excluded"]) == sorted(summary["excluded"])
    assert all(e["reason"] for e in manifest["excluded"])
    assert manifest["lint"]["skills"] == published + excluded
    assert manifest["lint"]["errors"] == summary["errors"]
    assert manifest["lint"]["warnings"] == summary["warnings"]

    # (every file of the bundle but itself, with its size and SHA-256)
    listed = {f["path"]: f for f in manifest["files"]}
    assert len(listed) == len(manifest["files"]), "a path is listed twice"
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink()}
    on_disk.discard("api/manifest.json")
    assert set(listed) == on_disk, (sorted(on_disk - set(listed))[:5], sorted(set(listed) - on_disk)[:5])
    assert summary["files"] == len(listed) + 1  # + the manifest
    for path, f in listed.items():
        p = out / path
        assert not p.is_symlink(), path
        assert p.stat().st_size == f["size"], path
        assert _sha256(p) == f["sha256"], path

    return manifest


def _check_skill_documents(out: Path, summary, published: int) -> list[str]:
    """The skills list, and one document (two identical twins) per listed skill."""
    skills_json = (out / "api/skills.json").read_bytes()
    assert (out / "api/skills/index.html").read_bytes() == skills_json
    descriptors = json.loads(skills_json)["skills"]
    ids = [d["id"] for d in descriptors]
    assert len(ids) == published == len(set(ids))
    assert ids == sorted(ids, key=lambda i: i.encode())
    assert not set(ids) & set(summary["excluded"])
    expected_docs = {"index.html"}
    for d in descriptors:
        encoded = quote(d["id"], safe="")
        doc_bytes = (out / "api/skills" / encoded).read_bytes()
        assert (out / "api/skills" / f"{encoded}.json").read_bytes() == doc_bytes, d["id"]
        doc = json.loads(doc_bytes)
        assert isinstance(doc.pop("body"), str)
        assert doc == d, d["id"]
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in d["metadata"].items()), d["id"]
        expected_docs |= {encoded, f"{encoded}.json"}
    # no document for an excluded skill, nor any other stray file
    assert set(os.listdir(out / "api/skills")) == expected_docs

    return ids


def _check_collections(out: Path, ids: list[str], collections: int) -> None:
    """Collections: every depth, each count the skills below it."""
    colls = json.loads((out / "api/skill-collections.json").read_text("utf-8"))["collections"]
    assert len(colls) == collections
    for c in colls:
        assert c["count"] == sum(1 for i in ids if i.startswith(c["path"] + "/")), c



def _check_discovery_index(out: Path, manifest: dict, ids: list[str]) -> None:
    """Discovery index (agentskills.io 0.2.0): the archive's digest, per-file digests, the draft's
    skill digest; each archive opens with the skill folder at its root."""
    index_path = out / ".well-known/agent-skills/index.json"
    index = json.loads(index_path.read_text("utf-8"))
    assert index["$schema"] == "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    described = {s["id"] for s in json.loads((out / "api/skills.json").read_text("utf-8"))["skills"]
                 if 0 < len(s["description"]) <= 1024}
    assert [e["id"] for e in index["skills"]] == [i for i in ids if i in described]  # (the client drops the rest)
    flat = manifest["flat_names"]
    assert [e["name"] for e in index["skills"]] == [flat[e["id"]] for e in index["skills"]]
    assert len(set(flat.values())) == len(flat)
    zip_only = {(w["id"], w["path"]) for w in manifest["withheld"] if w["reason"] == ACTIVE_REASON}
    for entry in index["skills"]:
        skill_id = entry["id"]
        lines = [(f["path"], f["digest"][7:]) for f in entry["files"]]
        assert len({p for p, _ in lines}) == len(lines)
        assert lines[0][0] == "SKILL.md", skill_id
        lines.sort(key=lambda x: x[0].encode())
        digest = hashlib.sha256(b"".join(p.encode() + b"\0" + h.encode() + b"\n" for p, h in lines))
        assert entry["files_digest"] == "sha256:" + digest.hexdigest(), skill_id
        package = out / urljoin("/.well-known/agent-skills/index.json", entry["url"]).lstrip("/")
        assert package == out / "api/discovery" / f"{skill_id}.zip"
        assert entry["digest"] == "sha256:" + _sha256(package), skill_id
        with zipfile.ZipFile(package) as z:
            assert z.testzip() is None, skill_id
            names = sorted(n for n in z.namelist() if not n.endswith("/"))
            # (an .xml, .html, .svg: in the zip, never under api/files nor in the index's file list)
            listed = [n for n in names if (skill_id, n) not in zip_only]
            assert listed == sorted(p for p, _ in lines), skill_id  # SKILL.md at the root, the files listed
            for n, hexd in lines:
                assert hashlib.sha256(z.read(n)).hexdigest() == hexd, (skill_id, n)
        published_files = {p.relative_to(out / "api/files" / skill_id).as_posix()
                           for p in (out / "api/files" / skill_id).rglob("*") if p.is_file()}
        # every published file is in the zip (SKILL.md under that name) but a root evals/ folder, which
        # the zip leaves out as `skillc pack` and Anthropic's package_skill.py do; nested skills are their own
        nested = {i[len(skill_id) + 1:] + "/" for i in ids if i.startswith(skill_id + "/")}
        expected = {("SKILL.md" if p.lower() == "skill.md" and "/" not in p else p) for p in published_files
                    if not p.startswith("evals/") and not p.startswith(tuple(nested))}
        assert expected == set(listed), skill_id


@pytest.mark.parametrize("name", _params())
def test_discovery_entry_lists_main_file_first(corpora: Path, build, name: str):
    """tests/bundle_contract.py (the contract client run against `skillc serve`, nginx and Caddy)
    requires each discovery entry's first file to be the skill's main file, whatever its spelling:
    openclaw's 25 skills stored as `skill.md` once listed `_meta.json` first."""
    proc, _summary, out = build(corpora, name)
    assert proc.returncode == 0, proc.stderr[-2000:]
    index = json.loads((out / ".well-known/agent-skills/index.json").read_text("utf-8"))
    not_first = [e["id"] for e in index["skills"] if e["files"][0]["path"] != "SKILL.md"]
    assert not_first == []  # (in the archive, a skill.md is SKILL.md, as npx skills needs it)
    lower = [e["id"] for e in index["skills"] if (out / "api/files" / e["id"] / "skill.md").is_file()
             and not (out / "api/files" / e["id"] / "SKILL.md").is_file()]
    assert len(lower) == LOWERCASE_MAIN.get(name, 0)


def test_repository_path_is_normalised(corpora: Path, tmp_path: Path):
    """docs/guides/registry.md (configuration): "Paths are normalised: the bundle shows a local
    repository's location from the build folder, `..` kept where it lies outside, never whole and
    never with a `..` inside it". The same folder named four ways (whole, with `..`, with a
    trailing slash, relative) gives the same bundle, which names no path of the build machine."""
    corpus = corpora / "anthropics__skills"
    if not corpus.is_dir():
        pytest.skip("anthropics__skills is not in this checkout of the corpora")
    (tmp_path / "sub").mkdir()
    spellings = {
        "plain": str(corpus),
        "dotdot": str(corpora / ".." / corpora.name / corpus.name),
        "slash": str(corpus) + "/",
        "relative": "sub/../" + os.path.relpath(corpus, tmp_path),
    }
    manifests, repositories = {}, {}
    for key, spelling in spellings.items():
        out = tmp_path / key
        proc = run_skillc("build", spelling, "--out", str(out), "--no-site", "--keep-going", "--quiet",
                          cwd=tmp_path, env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"),
                                             "HOME": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        manifests[key] = (out / "api/manifest.json").read_bytes()
        skills = json.loads((out / "api/skills.json").read_text("utf-8"))["skills"]
        repositories[key] = {s["metadata"]["skillc.repository"] for s in skills}
    # (normalised, from the build folder however given: the bundle names no path of the build machine)
    assert all(names == {os.path.relpath(corpus, tmp_path)} for names in repositories.values()), repositories
    assert len(set(manifests.values())) == 1
    assert f'"{corpora.resolve()}'.encode() not in manifests["plain"]  # (no string of it starts whole)
