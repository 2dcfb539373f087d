"""The installed tools the docs site's kept state is keyed by (``docsite.keys.tool_key``)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest

from skillc.emit.docsite import keys, site_key


@pytest.fixture()
def fake_tool(tmp_path, monkeypatch):
    """A package ``skillc_fake_tool`` on sys.path whose ``__init__.py`` states its version."""
    package = tmp_path / "skillc_fake_tool"
    package.mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(keys.TOOL_VERSION_FILES, "fake-tool", "skillc_fake_tool/__init__.py")
    keys.tool_key.cache_clear()
    yield package / "__init__.py"
    keys.tool_key.cache_clear()
    importlib.invalidate_caches()


def test_another_installed_version_gives_another_key(fake_tool):
    fake_tool.write_text('__version__ = "1.0"\n')
    first = keys.tool_key("fake-tool")
    assert first == hashlib.sha256(fake_tool.read_bytes()).hexdigest()
    fake_tool.write_text('__version__ = "1.1"\n')
    keys.tool_key.cache_clear()
    assert keys.tool_key("fake-tool") != first
    assert "skillc_fake_tool" not in sys.modules  # (found, never imported)


def test_a_tool_that_is_not_installed_is_a_question_mark(monkeypatch):
    monkeypatch.setitem(keys.TOOL_VERSION_FILES, "absent", "skillc_no_such_tool/__init__.py")
    keys.tool_key.cache_clear()
    assert keys.tool_key("absent") == "?"


@pytest.mark.parametrize("dist", ["mkdocs", "mkdocs-material", "markdown", "pygments"])
def test_each_renderer_tool_is_keyed_by_the_file_that_states_its_version(dist):
    keys.tool_key.cache_clear()
    package, _, name = keys.TOOL_VERSION_FILES[dist].partition("/")
    spec = importlib.util.find_spec(package)
    source = (Path(spec.submodule_search_locations[0]) / name).read_text(encoding="utf-8")
    assert "version" in source  # (the file really is the one that holds the version)
    assert keys.tool_key(dist) == hashlib.sha256(source.encode("utf-8")).hexdigest()


def test_the_site_key_follows_the_tools(monkeypatch):
    before = site_key({}, 0)
    real = keys.tool_key
    monkeypatch.setattr(keys, "tool_key", lambda dist: "other" if dist == "markdown" else real(dist))
    assert site_key({}, 0) != before
