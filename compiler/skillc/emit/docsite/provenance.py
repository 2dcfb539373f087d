"""Provenance people can follow, and supporting files as pages (pure but for ``text_pages``, which
reads the bundle's own published copies).

* ``local_location``: a local repository's path relative to the configuration that declared it (or
  the build folder for a path given on the command line), never the build machine's absolute path.
* ``view_url``: "view source" on GitHub, GitLab, Codeberg or Bitbucket for a git source at its
  resolved commit.
* ``text_pages``: a skill's supporting text files (references, scripts, examples) with the language
  they are shown in; binary, oversized and undecodable files stay links to the raw copy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from ... import secrets
from ...paths import shown_local_path


@dataclass(frozen=True)
class TextPage:
    """A supporting text file of a skill shown as a page of the site (never run, always escaped)."""

    path: str  # relative to the skill folder
    text: str  # redacted
    language: str  # "markdown" (rendered) or a Pygments lexer name for a code block ("text": none)


@dataclass(frozen=True)
class Provenance:
    """Where a skill came from, as people can follow it: never a path of the build machine."""

    location: str  # a local path relative to the configuration (or build folder), or the upstream URL
    commit: str  # the resolved commit of a git source ("" otherwise)
    path: str  # the skill's SKILL.md inside its repository
    view_url: str  # "view source" on the forge for a git source on a known host ("" otherwise)


MAX_TEXT_PAGE = 256 * 1024  # bytes: a bigger file is linked raw (a page would be slow and heavy)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
_SCP_URL = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")  # git@github.com:owner/repo.git
# How each forge links one file at one commit.
FORGES = {
    "github.com": "{base}/blob/{commit}/{path}",
    "gitlab.com": "{base}/-/blob/{commit}/{path}",
    "codeberg.org": "{base}/src/commit/{commit}/{path}",
    "bitbucket.org": "{base}/src/{commit}/{path}",
}


def local_location(location: str, config_file: str | None, cwd: str | None) -> str:
    """``location`` relative to the folder of the configuration that declared it (``config_file``
    is ``path:line``), else to ``cwd``; a relative location stays as written."""
    if not os.path.isabs(location):
        return PurePosixPath(location.replace(os.sep, "/")).as_posix()
    config = (config_file or "").rpartition(":")[0] if config_file and ":" in config_file else config_file
    base = os.path.dirname(config) if config and os.path.isabs(config) else cwd
    if not base:
        return Path(location).name
    return shown_local_path(location, base)


@lru_cache(maxsize=4096)  # (asked once per skill of each repository: the same few answers)
def site_location(kind: str, location: str, cwd: str | None, config_file: str | None = None) -> str:
    """A repository's location as the site shows it: ``shown_location`` (no credentials), with a
    local path made relative (``local_location``) even outside the build folder."""
    from ..common import shown_location

    if kind in ("filesystem", "zip", "git") and os.path.isabs(location):
        return local_location(location, config_file, cwd)
    return shown_location(kind, location, cwd)


@lru_cache(maxsize=4096)  # (asked once per skill: the same few repositories)
def repository_label(name: str, cwd: str | None) -> str:
    """A repository's name; one given as a path on the command line is named by its relative path."""
    return local_location(name, None, cwd) if os.path.isabs(name) else name


def web_base(url: str) -> tuple[str, str] | None:
    """(host, ``https://host/owner/repo``) of a git URL on the web, or None for a local path."""
    m = _SCP_URL.match(url) if "://" not in url else None
    if m:
        host, path = m.group(1), m.group(2)
    elif url.startswith(("https://", "http://", "ssh://", "git://")):
        rest = url.split("://", 1)[1]
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2].split(":")[0]
    else:
        return None
    path = path.strip("/").removesuffix(".git")
    return (host.lower(), f"https://{host.lower()}/{path}") if path else None


def view_url(url: str, commit: str, path: str) -> str:
    """The forge's page for ``path`` at ``commit`` of the repository at ``url``; "" when unknown."""
    web = web_base(url)
    if web is None or not commit or web[0] not in FORGES:
        return ""
    return FORGES[web[0]].format(base=web[1], commit=quote(commit, safe=""), path=quote(path, safe="/"))


def language_of(path: str) -> str:
    """``markdown`` for Markdown, else the Pygments lexer alias for the file name (``text``)."""
    if path.lower().endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    from pygments.lexers import find_lexer_class_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = find_lexer_class_for_filename(PurePosixPath(path).name)
    except ClassNotFound:
        lexer = None
    return lexer.aliases[0] if lexer is not None and lexer.aliases else "text"


def read_text(path: Path) -> str | None:
    """The file's text when it is small, UTF-8 and not binary; else None."""
    try:
        if path.stat().st_size > MAX_TEXT_PAGE:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


def text_pages(files_dir: Path, paths: Iterable[str]) -> tuple[TextPage, ...]:
    """The pages of a skill's supporting files, read from the bundle's copy (``api/files/<id>/``)."""
    pages = []
    for rel in paths:
        text = read_text(files_dir / rel)
        if text is not None:
            pages.append(TextPage(rel, secrets.redact(text)[0] if text else text, language_of(rel)))
    return tuple(pages)
