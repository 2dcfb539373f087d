"""Built-in rules.  Importing this package registers them all."""

from . import (  # noqa: F401
    claude,
    claude_code,
    collection,
    content,
    discovery,
    frontmatter,
    lightweight,
    manifests,
    markdown,
    memory,
    parsing,
    resolution,
    spec,
    steps,
)
