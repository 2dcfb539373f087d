"""adk-rust's scorer: the worked scores of research/frameworks.md §2.4 and its selection rules."""

from __future__ import annotations

import math

import pytest

from skillc.index.adk import AdkCandidate, SelectionPolicy, f32, rank, score_text
from skillc.index.tokenize import tokenize


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("code_search-v2.0", ["code", "search", "v2", "0"]),
        ("déjà vu", ["d", "é", "j", "à", "vu"]),
        ("打开 Safari 浏览器", ["打", "开", "safari", "浏", "览", "器"]),
        ("Use rg --files then rg.", ["use", "rg", "files", "then", "rg"]),
        ("ÀB Ωmega", ["À", "b", "Ω", "mega"]),  # non-ASCII letters are not case-folded
        ("hi 👋 there", ["hi", "there"]),  # emoji separate
        ("हिन्दी", ["ह", "ि", "न", "द", "ी"]),  # Other_Alphabetic vowel signs are tokens; virama is not
        ("", []),
    ],
)
def test_tokenizer(text, tokens):
    assert tokenize(text) == tokens


def test_worked_score_code_search():
    score = score_text("search rust codebase", "code_search", "Search Rust code with rg", ["code", "search"],
                       "Use rg --files then rg.")
    assert score == 5.5
    assert score_text("search rust codebase", "release_notes", "Prepare release notes", ["changelog"],
                      "Summarize commits.") == 0.0


def test_worked_score_injector_is_f32():
    score = score_text("Please search this repository quickly", "search", "Search code", [], "Use rg first.")
    assert score == f32(6.5 / f32(3 ** 0.5))
    assert f"{score:.6f}" == "3.752777"


def test_worked_score_tags_and_duplicate_query_tokens():
    one = score_text("search", "code", "code search", ["code", "search"], "Use rg.\n")
    two = score_text("search search", "code", "code search", ["code", "search"], "Use rg.\n")
    assert f"{one:.6f}" == "3.181981" and f"{two:.6f}" == "6.363961"
    assert two == f32(2 * one)


def test_worked_score_synthetic_deploy():
    score = score_text("deploy the app to production", "deploy-prod", "Deploy the application to production servers",
                       ["deploy", "ops"], "Run make build. Then run ./deploy.sh production. Check the health endpoint.")
    assert f"{score:.6f}" == "5.728715"


def _cands():
    return [AdkCandidate("code", "a/code", ("Code", "search")), AdkCandidate("release", "release", ("docs",)),
            AdkCandidate("code", "0/code", ("misc",)), AdkCandidate("beta", "b", ())]


def test_rank_ties_by_name_then_path_and_min_score_inclusive():
    cands = _cands()
    scores = {0: 2.0, 1: 1.0, 2: 2.0, 3: 2.0}
    out = rank(cands, scores, ["q"], SelectionPolicy(top_k=10, min_score=1.0))
    assert [(m.name, m.path) for m in out] == [("beta", "b"), ("code", "0/code"), ("code", "a/code"),
                                                ("release", "release")]
    assert [m.path for m in rank(cands, scores, ["q"], SelectionPolicy(top_k=10, min_score=1.0000001))] == [
        "b", "0/code", "a/code"]
    assert len(rank(cands, scores, ["q"])) == 1  # default top_k 1


def test_rank_tags_are_whole_lowercased():
    cands = _cands()
    scores = {0: 3.0, 1: 3.0, 2: 3.0}
    inc = rank(cands, scores, ["q"], SelectionPolicy(top_k=5, min_score=0.0, include_tags=("CODE",)))
    assert [m.path for m in inc] == ["a/code"]
    exc = rank(cands, scores, ["q"], SelectionPolicy(top_k=5, min_score=0.1, exclude_tags=("docs",)))
    assert [m.path for m in exc] == ["0/code", "a/code"]
    # "cod" is not a tag although it is a prefix of one
    assert rank(cands, scores, ["q"], SelectionPolicy(top_k=5, min_score=0.0, include_tags=("cod",))) == []


def test_rank_empty_query_needs_include_tags_and_zero_scores_pass_min_zero():
    cands = _cands()
    assert rank(cands, {}, [], SelectionPolicy(top_k=5, min_score=0.0)) == []
    by_tag = rank(cands, {}, [], SelectionPolicy(top_k=1, min_score=0.0, include_tags=("search",)))
    assert [(m.path, m.score) for m in by_tag] == [("a/code", 0.0)]
    assert rank(cands, {0: 9.0}, ["q"], SelectionPolicy(top_k=0)) == []


def test_f32_beyond_its_range_is_infinite_as_in_rust():
    """`"1e39".parse::<f32>()` and `1e39_f64 as f32` are infinity: a min_score so high selects
    nothing (no OverflowError blamed on the bundle)."""
    f32_max = 3.4028234663852886e38
    assert f32(1e39) == math.inf and f32(-1e39) == -math.inf
    assert f32(f32_max) == f32_max
    assert f32(f32_max + 2.0 ** 103) == math.inf  # half an ulp above: rounds (ties to even) up
    assert math.isnan(f32(math.nan))
    assert rank(_cands(), {0: 5.0}, ["x"], SelectionPolicy(top_k=3, min_score=1e39)) == []


def test_f32_of_an_int_beyond_its_range_is_infinite():
    """``Bundle.adk_select``/``select`` take an int ``min_score``: one past f32's range (or a
    double's) raised ``struct.error`` instead of selecting nothing."""
    assert f32(10 ** 39) == math.inf and f32(2 ** 128) == math.inf
    assert f32(10 ** 400) == math.inf and f32(-(10 ** 400)) == -math.inf
    assert f32(3) == 3.0
    assert rank(_cands(), {0: 5.0}, ["x"], SelectionPolicy(top_k=3, min_score=10 ** 400)) == []
