"""Fast scans of the lint hot path give the answers of their slow definitions: ``contains`` the
answer of ``in``, ``code_spans`` the spans of the code-span regex, a ``LazyPattern`` the answers
of its compiled pattern."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.textscan import LazyPattern, contains
from skillc.validate.rules.builtin.content import code_spans

# Few characters, so needles occur, nearly occur and repeat their first character many times
# (more than the probes tried one by one before the plain search).
_TEXT = st.text(alphabet="](<!-`~\n\u00e9\U0001f600ab", max_size=200)


@given(_TEXT, _TEXT.filter(bool))
def test_contains_is_in(text: str, needle: str) -> None:
    assert contains(text, needle) == (needle in text)


def test_contains_past_many_false_starts() -> None:
    text = "] " * 50 + "](x)"
    assert contains(text, "](")
    assert not contains("] " * 50, "](")
    assert contains("<" * 20 + "<!--", "<!--")


# The definition of a code span, as one regex: the oracle `code_spans` is checked against (the regex
# itself is too slow for lint: it is retried at every character of every span).
_CODE_SPAN_ORACLE = re.compile(r"(?<!`)(`+)(?!`)(?:[^`\n]++|\n(?![ \t\r]*(?:\n|\Z)|[ \t]*(?:[-*+][ \t]|\d{1,9}[.)][ \t]|"
                               r"#{1,6}[ \t]|>|\|))|(?!\1(?!`))`++)+?\1(?!`)")


@settings(max_examples=1000)
@given(st.text(alphabet="`a \n\t\r-*+1.)#>|", max_size=80))
def test_code_spans_pair_backtick_runs_as_the_definition_does(text: str) -> None:
    assert code_spans(text) == [m.span() for m in _CODE_SPAN_ORACLE.finditer(text)]


def test_code_spans_on_the_corpora_bodies() -> None:
    """Every real SKILL.md of two corpora: the same spans as the definition."""
    from conftest import CORPORA as corpora
    files = sorted(corpora.glob("openclaw__skills/**/SKILL.md"))[:800] + sorted(corpora.glob("anthropics__skills/**/*.md"))
    if not files:
        pytest.skip("the shared corpora are not beside the project")
    for f in files:
        text = f.read_text("utf-8", "replace")
        assert code_spans(text) == [m.span() for m in _CODE_SPAN_ORACLE.finditer(text)], f


@given(st.text(alphabet="aAb-_ \n", max_size=40))
def test_a_lazy_pattern_answers_as_its_compiled_pattern(text: str) -> None:
    lazy, compiled = LazyPattern(r"(?P<word>a+)-?b", re.I), re.compile(r"(?P<word>a+)-?b", re.I)
    assert [m.span("word") for m in lazy.finditer(text)] == [m.span("word") for m in compiled.finditer(text)]
    assert bool(lazy.search(text)) == bool(compiled.search(text))
    assert lazy.pattern == compiled.pattern and lazy.compiled() is lazy.compiled()


def test_importing_the_secret_scanner_compiles_none_of_its_formats() -> None:
    """Every command imports the scanner (and lint before its workers start): its formats are
    compiled when a text first holds one of their trigger words, not at import."""
    import subprocess
    import sys

    code = ("import skillc.secrets as s; lazy = [p.regex for p in s.PATTERNS] + [p.prefilter for p in s.PATTERNS "
            "if p.prefilter is not None]; print(sum(r._compiled is not None for r in lazy), len(lazy)); "
            "s.scan('password = hunter2hunter2 and AKIAABCDEFGHIJKLMNOP'); "
            "print(sum(r._compiled is not None for r in lazy))")
    before, after = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")[:2]
    assert before.split()[0] == "0" and int(before.split()[1]) > 30
    assert 0 < int(after) < int(before.split()[1])  # (a scan compiles the formats its text may hold, only those)
