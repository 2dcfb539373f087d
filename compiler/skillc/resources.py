"""Locate the project's data folders (templates/, schemas/, skills/) in a checkout or an install."""

from __future__ import annotations

from functools import cache
from pathlib import Path

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
