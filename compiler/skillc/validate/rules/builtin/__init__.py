"""Built-in rules.  Importing this package registers them all."""

from . import (  # noqa: F401
    claude,
    collection,
    content,
    discovery,
    frontmatter,
    lightweight,
    memory,
    parsing,
    resolution,
    spec,
    steps,
)
