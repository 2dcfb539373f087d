"""textscan.contains: the same answer as ``in``, whatever the text (it only changes how fast)."""

from hypothesis import given
from hypothesis import strategies as st

from skillc.textscan import contains

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
