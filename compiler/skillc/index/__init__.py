"""Search indexes of a bundle: the adk-rust tokenizer and scorer, the portable BM25 index.

``tokenize`` (pure), ``adk`` (adk-rust's lexical scorer), ``bm25`` (build the index files),
``reader`` (read them with the standard library, numpy when present), ``emit`` (the build emitter).
"""

from __future__ import annotations

from ..errors import SkillcError


class BundleError(SkillcError):
    """A bundle (or one of its files) is missing, corrupted, too new, or not a bundle at all."""

    exit_code = 1


class HashMismatch(BundleError):
    """A file whose size or SHA-256 is not the one the bundle lists: corrupted, or (over HTTP) read
    from a newer deployment than the file that lists it."""


class ArgumentTypeError(SkillcError, TypeError):
    """A reader called with an argument of the wrong type: the caller's mistake, never the bundle's
    (a ``TypeError`` naming the argument; a usage error, exit 2, where a command lets it out)."""


class ArgumentValueError(SkillcError, ValueError):
    """A reader called with a value it cannot use (an invalid URL): the caller's mistake (exit 2)."""


# What reading a bundle's data can raise when the data is not what skillc wrote: values of the
# wrong type or range, missing keys, nesting too deep for the JSON parser, text that is not Unicode.
MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError, RecursionError,
             UnicodeError)


def reads_bundle(command):
    """Wrap a command that reads a bundle (``skillc search``, ``render``, ``select``, ``memory``):
    data that is not what skillc writes becomes one ``BundleError`` line (exit 1), not an internal
    error, so a corrupted or hostile bundle never gets a traceback.

    Caller mistakes are not the bundle's: the readers check their arguments first and raise
    ``ArgumentTypeError``/``ArgumentValueError`` (``SkillcError``s, let through as usage errors), and
    a value out of a type's range (``--min-score 1e39``) is read as the framework reads it."""
    import functools

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except SkillcError:
            raise
        except MALFORMED as exc:
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise BundleError(f"the bundle's data is malformed ({type(exc).__name__}: {detail})",
                              hint="rebuild it with `skillc build`; --debug shows where") from exc
    return run
