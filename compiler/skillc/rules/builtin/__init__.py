"""Built-in rules.  Importing this package registers them all."""

from . import discovery, parsing, spec  # noqa: F401
