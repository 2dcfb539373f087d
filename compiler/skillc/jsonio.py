"""Canonical JSON for everything skillc writes: sorted keys, UTF-8 (not \\u-escaped), ``\\n`` ends."""

from __future__ import annotations

import json
from typing import Any


def compact_json(obj: Any) -> str:
    """One line of canonical JSON."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def json_bytes(obj: Any, *, pretty: bool = False) -> bytes:
    """Canonical JSON with a final newline.

    ``pretty`` (for the big documents people diff: manifest, discovery index, memory snapshot) puts
    each top-level key, and each item of a top-level list, on its own line; every piece is written by
    the C encoder (``indent=`` would fall back to the pure-Python one, 10x slower on 10,000 skills)."""
    if not pretty or not isinstance(obj, dict):
        return (compact_json(obj) + "\n").encode("utf-8")
    rows = []
    for key in sorted(obj):
        value = obj[key]
        if isinstance(value, list) and value:
            inner = ",\n".join("    " + compact_json(v) for v in value)
            rows.append(f"  {compact_json(key)}: [\n{inner}\n  ]")
        else:
            rows.append(f"  {compact_json(key)}: {compact_json(value)}")
    return ("{\n" + ",\n".join(rows) + "\n}\n").encode("utf-8")
