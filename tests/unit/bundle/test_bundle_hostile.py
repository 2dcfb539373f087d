"""Read commands on a bundle whose data lies: one line and exit 1, never a traceback or a wrong
answer.  The index files are rewritten with their hashes fixed up, so only the structural checks
can catch them."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    write_skill(tmp / "repo", "alpha", description="Deploy the alpha service. Use when deploying.")
    write_skill(tmp / "repo", "beta/gamma", description="Reads gamma rays. Use when measuring.")
    r = run_skillc("build", "repo", "--out", "dist", "--no-site", cwd=tmp,
                   env={"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    return tmp / "dist"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mutated(built: Path, tmp_path: Path, change: Callable[[Path, dict], None]) -> Path:
    """A copy of the bundle changed by ``change(api, search_header)``, every hash made to agree."""
    out = tmp_path / "b"
    shutil.copytree(built, out)
    api = out / "api"
    header_path = api / "index/search.json"
    header = json.loads(header_path.read_text())
    change(api, header)
    for meta in (header["dictionary"], header["tags"], header["body_unique"], *header["shards"],
                 *header["docs"]["files"]):
        data = (api / "index" / meta["file"]).read_bytes()
        meta["size"], meta["sha256"] = len(data), _sha(data)
    header_path.write_text(json.dumps(header))
    manifest = json.loads((api / "manifest.json").read_text())
    if isinstance(manifest.get("files"), list):
        for row in manifest["files"]:
            path = out / row["path"]
            if path.is_file():
                row["size"], row["sha256"] = path.stat().st_size, _sha(path.read_bytes())
    (api / "manifest.json").write_text(json.dumps(manifest))
    return out


def _posting_offsets_out_of_range(api: Path, header: dict) -> None:
    for shard in header["shards"]:  # every shard, so that any query meets one
        path = api / "index" / shard["file"]
        data = bytearray(path.read_bytes())
        start = 12 * shard["terms"] + 4  # after idf (float64 x T) and the term offsets (uint32 x T+1)
        for i in range(shard["terms"] + 1):
            struct.pack_into("<I", data, start + 4 * i, 0xFFFFFF00 + i)
        path.write_bytes(bytes(data))


def _skills_list(api: Path, text: str) -> None:
    (api / "skills.json").write_text(text)


def _select_json(api: Path, **changes) -> None:
    path = api / "index/select.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


CASES = {
    "posting offsets past the postings": (_posting_offsets_out_of_range, ("search", "deploy"), "corrupted"),
    "no shards": (lambda api, h: h.update(shards=[]), ("search", "deploy"), "corrupted"),
    "a count that is not a number": (lambda api, h: h["bm25"].update(k1="x"), ("search", "deploy"), "malformed"),
    "an ID that leaves the bundle": (
        lambda api, h: _skills_list(api, json.dumps({"skills": [{"id": "../../../../tmp/evil", "name": "e",
                                                                  "description": "d"}]})),
        ("render", "--to-prompt"), "is not safe"),
    "a skills list nested too deep": (lambda api, h: _skills_list(api, '{"skills":' + "[" * 100_000 + "]" * 100_000
                                                                    + "}"), ("render", "--inventory"),
                                      "not a Meerkat skills list"),
    "select.json with a short priority list": (
        lambda api, h: _select_json(api, priority=[]), ("select", "deploy"), "select.json"),
    "select.json with a setting that is not an integer": (
        lambda api, h: _select_json(api, settings={"max_skills_per_story": "3"}), ("select", "deploy"),
        "select.json"),
    "select.json with a rule without a name": (
        lambda api, h: _select_json(api, rules=[{"id": "alpha"}]), ("select", "deploy"), "select.json"),
    "a manifest whose files are not a list": (
        lambda api, h: (api / "manifest.json").write_text(json.dumps(
            {**json.loads((api / "manifest.json").read_text()), "files": 5})), ("search", "deploy"), "malformed"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lying_data_is_one_line_and_exit_1(built: Path, tmp_path: Path, case: str):
    change, args, words = CASES[case]
    bundle = mutated(built, tmp_path, change)
    r = run_skillc(args[0], str(bundle), *args[1:])
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert words in r.stderr and "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert "/tmp/evil" not in r.stdout


def test_select_json_that_lies_is_a_bundle_error_in_the_api(built: Path, tmp_path: Path):
    from skillc import Bundle
    from skillc.index import BundleError

    bundle = mutated(built, tmp_path, lambda api, h: _select_json(api, priority=[1]))
    with pytest.raises(BundleError, match=r"select\.json: .*priorit"):
        Bundle.open(bundle).select("deploy the alpha service")


def test_a_bad_skills_list_stays_a_bundle_error_on_every_call(built: Path, tmp_path: Path):
    """The first call raised BundleError; the next ones took the same (cached) bytes as already
    parsed and failed with AttributeError/TypeError on the missing list."""
    from skillc import Bundle
    from skillc.index import BundleError

    bundle = mutated(built, tmp_path, lambda api, h: _skills_list(api, '{"skills": 3}'))
    b = Bundle.open(bundle)
    for call in (b.skills, lambda: b.get("alpha"), b.render_inventory, b.to_prompt, lambda: b.search("deploy"),
                 b.skills):
        with pytest.raises(BundleError, match="not a Meerkat skills list"):
            call()


def test_the_untouched_copy_answers(built: Path, tmp_path: Path):
    bundle = mutated(built, tmp_path, lambda api, h: None)
    r = run_skillc("search", str(bundle), "deploy")
    assert r.returncode == 0 and r.stdout.split()[:2] == ["1.", "alpha"]


def test_a_memory_snapshot_that_lies(tmp_path: Path):
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "snapshot.json").write_text(json.dumps({"format": "skillc-memory-snapshot"}))
    for command in (("memory", "search", str(snap), "q"), ("memory", "show", str(snap))):
        r = run_skillc(*command)
        assert r.returncode == 1 and "malformed" in r.stderr and "internal error" not in r.stderr
