"""Flat names (skillc.flatnames): the one-segment names npx skills, MCP and plugins need."""

from hypothesis import given
from hypothesis import strategies as st

from skillc.flatnames import FLAT_NAME_RE, assign_flat_names


def test_a_unique_leaf_is_the_name():
    flat = assign_flat_names(["skills/algorithmic-art", "skills/pdf"])
    assert flat.names == {"skills/algorithmic-art": "algorithmic-art", "skills/pdf": "pdf"}
    assert flat.collisions == ()


def test_colliding_leaves_take_the_whole_id_and_are_reported():
    flat = assign_flat_names(["python/testing", "js/testing", "pdf"])
    assert flat.names == {"python/testing": "python-testing", "js/testing": "js-testing", "pdf": "pdf"}
    assert [(c.leaf, c.ids) for c in flat.collisions] == [("testing", ("js/testing", "python/testing"))]


def test_names_equal_after_joining_get_a_counter_in_id_byte_order():
    flat = assign_flat_names(["a/b-c/x", "a-b/c/x"])
    assert flat.names == {"a-b/c/x": "a-b-c-x", "a/b-c/x": "a-b-c-x-2"}


def test_odd_characters_and_long_ids_still_give_valid_names():
    flat = assign_flat_names(["Team/My_Skill", "x/" + "long-" * 30 + "end", "__"])
    assert flat.names["Team/My_Skill"] == "my-skill"
    assert flat.names["__"] == "skill"
    assert len(flat.names["x/" + "long-" * 30 + "end"]) <= 64


@given(st.lists(st.text(min_size=1, max_size=40), max_size=12))
def test_every_name_is_valid_and_unique(ids):
    flat = assign_flat_names(ids)
    names = list(flat.names.values())
    assert len(set(names)) == len(names) == len(set(ids))
    assert all(FLAT_NAME_RE.match(n) and len(n) <= 64 for n in names)
    assert assign_flat_names(reversed(ids)).names == flat.names
