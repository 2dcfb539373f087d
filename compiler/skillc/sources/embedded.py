"""The embedded repository: skillc's own ``skills/`` (see ``resources.embedded_skills``)."""

from .filesystem import EmbeddedSource

__all__ = ["EmbeddedSource"]
