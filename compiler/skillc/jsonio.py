"""Canonical JSON for everything skillc writes: sorted keys, UTF-8 (not \\u-escaped), ``\\n`` ends."""

from __future__ import annotations

import json
import math
import sys
from json.encoder import encode_basestring
from typing import Any


def compact_json(obj: Any) -> str:
    """One line of canonical JSON."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# ``compact_json(text)`` for a ``str``, without ``json.dumps``'s per-call set-up: rows written by hand
# for 10,000 skills (the discovery indexes) cost half as much (tests compare them with compact_json).
json_string = encode_basestring


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


NESTED_TOO_DEEPLY = "nested too deeply"  # (load_json's message for a RecursionError)


def _int(text: str) -> int:
    if len(text.lstrip("-")) > sys.get_int_max_str_digits() > 0:
        raise _Refused(text, f"an integer of {len(text.lstrip('-')):,} digits (the limit is "
                             f"{sys.get_int_max_str_digits():,})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(text, f"a number out of range ({text[:20]}{'…' if len(text) > 20 else ''})")
    return value


def _constant(text: str) -> float:
    raise _Refused(text, f"{text} is not JSON")


class _Refused(ValueError):
    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text, self.message = text, message


def load_json(data: str | bytes | bytearray) -> Any:
    """``json.loads`` for text that may be hostile (memory files, imported stores, remote registries,
    configuration): what Python's decoder accepts but no file skillc writes could hold, or what
    breaks it, is a ``json.JSONDecodeError`` like any syntax error (callers already report those with
    their file and line): an integer over Python's int-string conversion limit (a ValueError that
    was an internal error), a float that overflows to infinity and ``NaN``/``Infinity`` (written back
    they would make invalid JSON), nesting deep enough to exhaust the stack (RecursionError)."""
    text = data if isinstance(data, str) else bytes(data).decode(json.detect_encoding(bytes(data)), "surrogatepass")
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except _Refused as exc:
        raise json.JSONDecodeError(exc.message, text, max(0, text.find(exc.text))) from None
    except RecursionError:
        raise json.JSONDecodeError(NESTED_TOO_DEEPLY, text, 0) from None
