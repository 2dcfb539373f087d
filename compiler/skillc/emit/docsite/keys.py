"""What the site's kept state is keyed by besides its inputs: the code that makes pages from them
(``renderer_key``), read by the model's memo (``model.memo_code_key``) and the page plan (``pages``),
and the installed tools that render them (``tool_key``)."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path

from ...resources import data_dir


@cache
def renderer_key() -> str:
    """What turns the inputs into a page's Markdown: the page templates, this package's code, the
    skillc version (the helpers it calls elsewhere change with it)."""
    from ...version import __version__

    h = hashlib.sha256(__version__.encode())
    folder = Path(__file__).resolve().parent
    for path in sorted([*data_dir("site").joinpath("pages").glob("*.j2"), data_dir("site") / "mkdocs.yml.j2",
                        *folder.glob("*.py")]):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# Each tool the site's output depends on, by the file of its package that states its version.
TOOL_VERSION_FILES = {"mkdocs": "mkdocs/__init__.py", "mkdocs-material": "material/__init__.py",
                      "markdown": "markdown/__meta__.py", "pygments": "pygments/__init__.py"}


@cache
def tool_key(dist: str) -> str:
    """The installed version of ``dist`` (a key of ``TOOL_VERSION_FILES``), as the SHA-256 of the file
    that states it (any other version has other bytes there); ``?`` when it is not installed.
    Read without importing the package or ``importlib.metadata``: that import and the lookup took
    ≈ 40 ms, on the critical path of a rebuild's docs site."""
    package, _, name = TOOL_VERSION_FILES[dist].partition("/")
    spec = importlib.util.find_spec(package)  # (a top-level package: found, not executed)
    if spec is None or not spec.submodule_search_locations:
        return "?"
    for folder in spec.submodule_search_locations:
        try:
            return hashlib.sha256((Path(folder) / name).read_bytes()).hexdigest()
        except OSError:
            continue
    return "?"
