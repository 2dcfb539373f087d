"""skillc's version, in a module of its own: every module may import it without importing the
package's ``__init__`` (whose lazy ``Bundle`` would close an import cycle)."""

__version__ = "0.1.0"
