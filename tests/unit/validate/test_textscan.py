"""Fast scans of the lint hot path give the answers of their slow definitions: ``contains`` the
answer of ``in``, ``code_spans`` the spans of the code-span regex."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.textscan import contains
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
