"""What the site's kept state is keyed by besides its inputs: the code that makes pages from them
(``renderer_key``), read by the model's memo (``model.memo_code_key``) and the page plan (``pages``)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from ...resources import data_dir


@cache
def renderer_key() -> str:
    """What turns the inputs into a page's Markdown: the page templates, this package's code, the
    skillc version (the helpers it calls elsewhere change with it)."""
    from ...version import __version__

    h = hashlib.sha256(__version__.encode())
    folder = Path(__file__).resolve().parent
    for path in sorted([*data_dir("site").joinpath("pages").glob("*.j2"), data_dir("site") / "mkdocs.yml.j2",
                        *folder.glob("*.py")]):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()
