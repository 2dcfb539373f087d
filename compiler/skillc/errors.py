"""Errors a user can act on.  The CLI prints them as one line and exits with their code."""

from __future__ import annotations


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
