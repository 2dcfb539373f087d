"""Recall: seed 000's relevance score, filters, the FTS5 fallback, `skillc memory search|show`, over HTTP."""

from __future__ import annotations

import functools
import http.server
import json
import math
import threading
from pathlib import Path

import pytest

from conftest import PROJECT, run_skillc
from skillc.errors import SkillcError
from skillc.memory.model import entry_from_dict, epoch
from skillc.memory.pipeline import freeze_entries
from skillc.memory.recall import MemoryIndex
from skillc.memory.settings import MemorySettings
from skillc.memory.text import Idf, cosine, terms

AS_OF = epoch("2026-03-01T00:00:00Z")
RAWS = [
    {"id": "pnpm", "content": "Always use pnpm instead of npm for installs", "category": "preference",
     "keywords": ["pnpm", "npm", "package-manager"], "importance": 0.9, "last_accessed_at": "2026-02-27",
     "namespace": "project/acme"},
    {"id": "routes", "content": "API routes live in src/routes", "category": "convention", "importance": 0.7,
     "namespace": "project/acme", "last_accessed_at": "2026-03-01"},
    {"id": "yarn", "content": "The docs site uses yarn workspaces for installs", "category": "fact", "importance": 0.4,
     "last_accessed_at": "2026-01-01"},
    {"id": "low", "content": "npm audit output is noisy", "category": "fact", "importance": 0.05},
    {"id": "deploy", "content": "Deployments run from the release pipeline", "category": "convention",
     "importance": 0.6, "namespace": "project/other"},
    {"id": "old-npm", "content": "Use npm for installs", "category": "preference", "importance": 0.5,
     "namespace": "project/acme"},
    {"id": "new-npm", "content": "Use pnpm for all installs", "category": "preference", "importance": 0.8,
     "namespace": "project/acme", "supersedes": "old-npm"},
]


@pytest.fixture(scope="module")
def snap(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("recall") / "snap"
    entries = [entry_from_dict(r, default_time="2026-03-01T00:00:00Z")[0] for r in RAWS]
    freeze_entries(entries, out, settings=MemorySettings(min_importance=0.0), as_of=AS_OF)
    return out


def test_score_is_seed_000s_formula(snap: Path) -> None:
    index = MemoryIndex.open(snap)
    hits = index.search("which package manager for installs: npm or pnpm")
    assert [h.entry["id"] for h in hits][:2] == ["pnpm", "new-npm"]
    active = [e for e in index.doc["entries"] if e["status"] == "active"]
    idf = Idf([terms(e["content"]) for e in active])
    q = terms("which package manager for installs: npm or pnpm")
    for h in hits:
        e = h.entry
        sim = cosine(idf.vector(q, known_only=True), idf.vector(terms(e["content"])))
        kw = set(terms(" ".join(e["keywords"]))) if e["keywords"] else set(terms(e["content"]))
        jac = len(set(q) & kw) / len(set(q) | kw)
        days = (AS_OF - epoch(e["last_accessed_at"])) / 86400
        want = 0.40 * sim + 0.25 * jac + 0.20 * e["effective_importance"] + 0.15 / (1 + 0.1 * days)
        assert math.isclose(h.score, want, rel_tol=1e-9), e["id"]
        assert h.mode == "tfidf"
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_filters_defaults_and_superseded(snap: Path) -> None:
    """The filters choose the candidates (seed 000's step 2); every candidate is scored."""
    index = MemoryIndex.open(snap)
    ids = {h.entry["id"] for h in index.search("npm installs")}
    assert ids == {"pnpm", "routes", "yarn", "deploy", "new-npm"}
    assert "low" not in ids  # below min_importance 0.1 by default
    assert "old-npm" not in ids  # superseded
    assert "low" in {h.entry["id"] for h in index.search("npm", min_importance=0.0)}
    assert {h.entry["id"] for h in index.search("installs", namespace="project/acme")} == {"pnpm", "new-npm", "routes"}
    assert {h.entry["id"] for h in index.search("installs", namespace="project")} == {"pnpm", "new-npm", "routes",
                                                                                       "deploy"}
    assert {h.entry["id"] for h in index.search("installs", category="fact")} == {"yarn"}
    assert index.search("installs", top_k=1) == index.search("installs")[:1]


def test_every_candidate_is_scored_like_a_full_scan(snap: Path) -> None:
    """A memory that shares nothing with the query still scores 0.20 · importance + 0.15 · recency
    and can rank above a weak match, as the seed's flow scores every candidate."""
    index = MemoryIndex.open(snap)
    for query in ("npm installs", "zebra quantum", "routes", "", "the docs site"):
        for as_of in (None, epoch("2026-06-01T00:00:00Z")):
            hits = index.search(query, top_k=3, as_of=as_of)
            every = index.search(query, top_k=100, as_of=as_of)
            assert len(every) == 5  # every active entry with importance >= 0.1
            assert hits == every[:3], (query, as_of)
            assert [h.score for h in every] == sorted((h.score for h in every), reverse=True)
    unrelated = index.search("zebra quantum")
    assert all(h.similarity == 0 and h.keyword_overlap == 0 for h in unrelated)

    def base(e) -> float:  # importance and recency only
        return 0.20 * e["effective_importance"] + 0.15 / (1 + 0.1 * (AS_OF - epoch(e["last_accessed_at"])) / 86400)

    for h in unrelated:
        assert math.isclose(h.score, base(h.entry), rel_tol=1e-9)
    # A weak match ranks below unrelated but important, recent memories.
    ranked = [h.entry["id"] for h in index.search("docs")]
    assert ranked.index("yarn") > 0 and {"pnpm", "new-npm"} <= set(ranked[:ranked.index("yarn")])


def test_fts5_fallback_when_no_term_is_shared(snap: Path) -> None:
    index = MemoryIndex.open(snap)
    hits = index.search("deploy")  # shares no term ("Deployments"), matches as an FTS5 prefix
    assert hits[0].entry["id"] == "deploy" and all(h.similarity == 0 for h in hits[1:])
    assert hits[0].mode == "fts5-fallback" and hits[0].similarity == 1.0


def test_show_lists_like_the_memory_tab(snap: Path) -> None:
    index = MemoryIndex.open(snap)
    assert [e["id"] for e in index.show(category="preference")] == ["pnpm", "new-npm"]
    assert [e["id"] for e in index.show(status="superseded")] == ["old-npm"]
    assert [e["id"] for e in index.show(text="SRC/routes")] == ["routes"]
    assert index.stats()["memories"] == 6


def test_cli_search_and_show(snap: Path) -> None:
    r = run_skillc("memory", "search", str(snap), "pnpm package manager", "--json")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert results[0]["id"] == "pnpm" and set(results[0]) >= {"score", "similarity", "keyword_overlap", "recency"}
    text = run_skillc("memory", "search", str(snap), "routes", "--namespace", "project/acme")
    assert text.returncode == 0 and "[CONV] API routes live in src/routes" in text.stdout
    unrelated = run_skillc("memory", "search", str(snap), "zebra")
    assert unrelated.returncode == 0 and "no memory shares a term with the query" in unrelated.stderr
    none = run_skillc("memory", "search", str(snap), "zebra", "--namespace", "project/nobody")
    assert none.returncode == 1 and "no memories match the filters" in none.stderr
    show = run_skillc("memory", "show", str(snap), "--category", "preference")
    assert show.returncode == 0
    assert show.stdout.splitlines()[-1] == "2 memories │ 2 pref │ 0 conv │ 0 patn │ 0 warn │ 0 fact"
    assert "[PREF] ★★★★★  Always use pnpm" in show.stdout or "[PREF] ★★★★☆  Always use pnpm" in show.stdout
    one = run_skillc("memory", "show", str(snap), "old-npm")
    assert one.returncode == 0 and "Superseded by: ['new-npm']" in one.stdout
    # the stars are the effective importance's, in the list and in one memory's view alike (`yarn`:
    # importance 0.4 is ★★, decayed over 59 days to 0.26, ★)
    listed = [line.split("  ", 1)[0] for line in run_skillc("memory", "show", str(snap)).stdout.splitlines()
              if "yarn workspaces" in line]
    detail = next(line for line in run_skillc("memory", "show", str(snap), "yarn").stdout.splitlines()
                  if line.startswith("Importance:"))
    assert listed == ["[FACT] ★☆☆☆☆"] and detail.endswith(" ★☆☆☆☆"), (listed, detail)
    missing = run_skillc("memory", "show", str(snap), "nope")
    assert missing.returncode == 1 and "no memory 'nope'" in missing.stderr
    nobundle = run_skillc("memory", "search", str(snap.parent / "missing"), "x")
    assert nobundle.returncode == 2 and "no such bundle" in nobundle.stderr and "Traceback" not in nobundle.stderr


def test_cli_search_and_show_never_print_terminal_controls(snap: Path, tmp_path: Path) -> None:
    """A snapshot read from a bundle or a URL is data skillc did not necessarily write: a memory's
    escape sequence (a window title, a colour) reached the terminal through `memory search` and
    `memory show`, where the renderers and lint show `\\x1b`."""
    import shutil

    hostile = tmp_path / "snap"
    shutil.copytree(snap, hostile)
    doc_file = hostile / "snapshot.json"
    doc_file.chmod(0o644)
    doc = json.loads(doc_file.read_text("utf-8"))
    for e in doc["entries"]:
        if e["id"] == "pnpm":
            e["content"] += " \x1b]0;pwned\x07\x1b[31mred"
            e["keywords"] = [*e["keywords"], "\x1b[2J"]
    doc_file.write_text(json.dumps(doc), "utf-8")
    for args in (["search", str(hostile), "pnpm"], ["show", str(hostile)], ["show", str(hostile), "pnpm"]):
        r = run_skillc("memory", *args)
        assert r.returncode == 0, (args, r.stderr)
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout, (args, r.stdout)
        assert "\\x1b]0;pwned\\x07\\x1b[31mred" in r.stdout, (args, r.stdout)


def test_every_memory_option_is_explained_by_help() -> None:
    """`skillc memory search --help` and `memory show --help` listed --category, --type, --top-k,
    --status, --offset and --json with no word of what they do."""
    import click

    from skillc.cli.memory import memory

    missing = [f"{name} {opt.opts[0]}" for name, cmd in memory.commands.items() for opt in cmd.params
               if isinstance(opt, click.Option) and not opt.hidden and not opt.help]
    assert missing == []


def test_open_over_http_on_loopback(snap: Path, tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "api").mkdir(parents=True)
    import shutil

    shutil.copytree(snap, root / "api" / "memory")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        index = MemoryIndex.open(url)
        assert index.search("routes")[0].entry["id"] == "routes"
        # the API base URL, which `skillc search` and Bundle.open take, works too
        assert MemoryIndex.open(url + "/api").search("routes")[0].entry["id"] == "routes"
        assert index.search("deploy")[0].entry["id"] == "deploy"  # FTS5 from the downloaded database
        with pytest.raises(SkillcError, match="no memory snapshot"):
            MemoryIndex.open(url + "/nothing-here")
    finally:
        server.shutdown()
        server.server_close()


def test_skill_block_with_an_intent_ranks_by_relevance(tmp_path: Path) -> None:
    raws = [{"id": f"n{i}", "namespace": "skill/pdf", "content": text, "note": {"kind": "fix", "intent": intent}}
            for i, (text, intent) in enumerate([("Use pikepdf to keep form fields", "merge forms"),
                                                ("Run OCR on scanned pages first", "extract text")])]
    entries = [entry_from_dict(r, default_time="2026-03-01T00:00:00Z")[0] for r in raws]
    freeze_entries(entries, tmp_path / "s", settings=MemorySettings(), as_of=AS_OF)
    index = MemoryIndex.open(tmp_path / "s" / "snapshot.json")
    block = index.skill_block("pdf", intent="extract text from a scan")
    assert block.startswith('<skill-memory skill="pdf" mode="full" count="2"')
    assert block.index("OCR") < block.index("pikepdf")
    assert index.skill_block("pdf").startswith('<skill-memory skill="pdf" mode="no-intent"')


def test_skill_block_intent_without_words_is_flat_fts(tmp_path: Path) -> None:
    # seed 003: an intent is given but sanitizeSkillIntentForFts finds no [\p{L}\p{N}]+ token, so
    # the flat order is labelled "flat-fts"; only a missing or blank intent is "no-intent".
    raw = {"id": "n0", "namespace": "skill/pdf", "content": "Use pikepdf", "note": {"kind": "fix"}}
    freeze_entries([entry_from_dict(raw, default_time="2026-03-01T00:00:00Z")[0]], tmp_path / "s",
                   settings=MemorySettings(), as_of=AS_OF)
    index = MemoryIndex.open(tmp_path / "s" / "snapshot.json")
    assert index.skill_block("pdf", intent="?!").startswith('<skill-memory skill="pdf" mode="flat-fts" count="1"')
    assert index.skill_block("pdf", intent="  ").startswith('<skill-memory skill="pdf" mode="no-intent"')
    assert index.skill_block("pdf", intent="the").startswith('<skill-memory skill="pdf" mode="full"')


def test_bundle_folder_is_accepted(tmp_path: Path) -> None:
    data = PROJECT / "tests" / "data" / "memory" / "repo"
    out = tmp_path / "dist"
    r = run_skillc("build", str(data), "--out", str(out), "--no-site", env={"SOURCE_DATE_EPOCH": "1771200000"})
    assert r.returncode == 0, r.stderr
    assert MemoryIndex.open(out).search("pnpm")[0].entry["id"] == "pref-pnpm"
    assert MemoryIndex.open(out / "api").search("pnpm")[0].entry["id"] == "pref-pnpm"
    r = run_skillc("memory", "search", str(out / "api"), "pnpm")
    assert r.returncode == 0 and "pref-pnpm" in r.stdout
