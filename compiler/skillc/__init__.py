"""skillc: a build-time compiler for agent skills."""

from __future__ import annotations

from .version import __version__

__all__ = ["__version__", "Bundle"]


def __getattr__(name: str):
    # The consumer API is imported lazily so `skillc lint` starts fast.
    if name == "Bundle":
        from .bundle.reader import Bundle

        return Bundle
    raise AttributeError(name)
