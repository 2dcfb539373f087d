"""Errors a user can act on.  The CLI prints them as one line and exits with their code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


class SkillcError(Exception):
    """A problem with the input or the environment, not a bug: shown without a traceback."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class ConfigError(SkillcError):
    """A configuration file is wrong; the message names the file and line."""


class BuildError(SkillcError):
    """A build cannot go on (exit 1: the inputs fail, not the tool).

    ``diagnostics``: the ``(repository, Diagnostic)`` errors that failed it, when skills failed
    lint or resolution (the command prints them with their file and line before the one-line error)."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None,
                 diagnostics: tuple = (), failed: dict[str, str] | None = None) -> None:
        super().__init__(message, hint=hint, exit_code=exit_code)
        self.diagnostics = diagnostics
        self.failed = dict(failed or {})


@contextmanager
def writing(path: str | os.PathLike) -> Iterator[None]:
    """An OSError raised while writing ``path`` names it.  ``write()`` on a full disk (ENOSPC,
    EDQUOT, EFBIG) raises one with no file name, and "No space left on device" alone leaves the user
    to guess which of the output, the cache or a temporary folder filled."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
        raise
