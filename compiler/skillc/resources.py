"""Locate the project's data folders (templates/, schemas/, skills/) in a checkout or an install."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # (jinja2 is imported when a template is first rendered: lint never pays for it)
    import jinja2

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """``templates``, ``schemas`` or ``skills``: from the source tree, else from the installed package."""
    for candidate in (_PACKAGE.parent.parent / name, _PACKAGE / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"skillc data folder {name!r} is missing from this installation")


def schema_path(name: str) -> Path:
    return data_dir("schemas") / name


def template_dir() -> Path:
    return data_dir("templates")


def embedded_skills() -> Path:
    return data_dir("skills")


def template_environment(folder: Path, *, autoescape: bool = False, trim_blocks: bool = False,
                         keep_trailing_newline: bool = False, finalize: Callable[[Any], Any] | None = None,
                         ) -> jinja2.Environment:
    """The Jinja environment of one template folder.  Every template skillc renders fails on a
    variable it was not given (``StrictUndefined``) instead of printing nothing; ``trim_blocks``
    lets a block tag take its whole line (Jinja's trim_blocks and lstrip_blocks together)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), autoescape=autoescape,
                              trim_blocks=trim_blocks, lstrip_blocks=trim_blocks,
                              keep_trailing_newline=keep_trailing_newline, finalize=finalize,
                              undefined=jinja2.StrictUndefined)
