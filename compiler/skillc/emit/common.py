"""Helpers every bundle emitter shares: canonical JSON, ID encoding, wire fields, digests.

All pure except ``write``: the emitters build bytes here and write them only below the staging
directory they are given.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from .. import secrets
from ..errors import writing
from ..jsonio import compact_json, json_bytes  # (also re-exported for the emitters)
from ..model import WIRE_FRONTMATTER_KEYS
from ..paths import shown_local_path
from ..resolve_types import SourceSkill

WIRE_SCOPES = ("builtin", "project", "user")
SKILLC_PREFIX = "skillc."  # metadata keys skillc adds itself (provenance)


_compact = compact_json


def shown_location(kind: str, location: str, cwd: str | None) -> str:
    """A repository's location as the bundle shows it (manifest, site): a local path relative to
    the build folder, ``..`` kept outside it (``shown_local_path``: the bundle does not depend on
    where a checkout lives, and names no path of the build machine), the embedded repository by
    name, and never credentials (a URL's user and password are dropped, and so are its query and
    fragment: a signed download link carries its key id and signature there,
    `?X-Amz-Credential=AKIA…&X-Amz-Signature=…`; anything else that looks like a secret is redacted)."""
    if kind == "embedded":
        return "embedded:skills"
    if kind in ("filesystem", "zip", "git") and cwd and os.path.isabs(location):  # (a git url may be a local path)
        return shown_local_path(location, cwd)
    if "://" in location and ("@" in location or "?" in location or "#" in location):
        try:
            parts = urlsplit(location)
            host = parts.netloc.rpartition("@")[2]
            location = urlunsplit(parts._replace(netloc=host, query="", fragment=""))
        except ValueError:  # not a URL after all (an invalid port, say): redaction below still applies
            pass
    return secrets.redact(location)[0] if location else location


def pretty_json_rows(doc: Mapping[str, Any], key: str, rows: list[str]) -> bytes:
    """``json_bytes({**doc, key: items}, pretty=True)`` where ``rows`` are the items already as
    compact JSON (cached per skill, or written directly: 10,000 ``json.dumps`` calls are most of the
    time a manifest or discovery index takes)."""
    return with_rows(pretty_json_head(doc, key), key, rows)


def pretty_json_head(doc: Mapping[str, Any], key: str) -> bytes:
    return json_bytes({**doc, key: []}, pretty=True)


def with_rows(head: bytes, key: str, rows: list[str]) -> bytes:
    """``pretty_json_rows`` from ``head``, the document's pretty JSON with ``key`` empty (which a
    build can write before it knows the rows: the manifest's, while the docs site is built)."""
    around = rows_around(head, key)
    if not rows or around is None:
        return head
    return around[0] + ",\n".join("    " + r for r in rows).encode() + around[1]


def rows_around(head: bytes, key: str) -> tuple[bytes, bytes] | None:
    """``head`` (pretty JSON with ``key`` an empty list) cut where ``with_rows`` puts the rows: what
    comes before them (through the list's opening line) and after them (from the line break before
    its closing bracket); None when ``head`` has no such list."""
    name = compact_json(key)
    marker = f"\n  {name}: []".encode()  # its one top-level line (values hold no raw newline)
    at = head.find(marker)
    if at < 0:
        return None
    return head[:at] + f"\n  {name}: [\n".encode(), b"\n  ]" + head[at + len(marker):]


def encode_id(skill_id: str) -> str:
    """How an ID appears in a URL and as a file name: every byte but ``A-Za-z0-9-_.~`` escaped."""
    return quote(skill_id, safe="")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def skill_digest(files: Iterable[tuple[str, str]]) -> str:
    """Agent Skills discovery (v0.2.0) skill digest: SHA-256 over ``path\\0hex\\n`` sorted by path bytes."""
    h = hashlib.sha256()
    for path, hexdigest in sorted(files, key=lambda f: f[0].encode("utf-8")):
        h.update(path.encode("utf-8") + b"\0" + hexdigest.encode("ascii") + b"\n")
    return "sha256:" + h.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def metadata_text(value: Any) -> str:
    """A wire ``metadata`` value is a string: strings stay, everything else becomes JSON text
    (``true``, ``3``, ``null``, ``["a","b"]``, ``{"k":"v"}``); dates become ISO 8601."""
    if isinstance(value, str):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return json.dumps(_plain(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def wire_metadata(skill: SourceSkill) -> dict[str, str]:
    """The string→string ``metadata`` of a skill.

    The frontmatter keys that have no wire field (``license``, ``allowed-tools``, format A's
    ``version``…), then the entries of its ``metadata`` map that no such key already gave (a
    top-level key is the field its format defines; lint F414 reports the hidden entry), then
    skillc's provenance keys (``skillc.repository``, ``skillc.digest``).
    """
    meta = skill.document.meta
    out: dict[str, str] = {}
    for key, value in meta.items():
        key = str(key)
        if key not in WIRE_FRONTMATTER_KEYS:
            out[key] = metadata_text(value)
    inner = meta.get("metadata")
    if isinstance(inner, Mapping):
        for key, value in inner.items():
            out.setdefault(str(key), metadata_text(value))
    elif inner is not None:
        out["metadata"] = metadata_text(inner)
    out[SKILLC_PREFIX + "repository"] = skill.repository.name
    out[SKILLC_PREFIX + "digest"] = skill_digest((f.path, f.sha256) for f in skill.files)
    return out


def requires_capabilities(skill: SourceSkill) -> list[str]:
    value = skill.document.meta.get("requires_capabilities")
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [metadata_text(v) for v in value]
    return [metadata_text(value)]


def wire_descriptor(skill: SourceSkill) -> dict[str, Any]:
    """Meerkat v2.0 ``WireSkillDescriptor`` (research/frameworks.md §1.5)."""
    return {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "scope": skill.repository.tier.scope,
        "requires_capabilities": requires_capabilities(skill),
        "metadata": wire_metadata(skill),
    }


def wire_body(skill: SourceSkill) -> str:
    """The wire ``body``: the Markdown after the frontmatter as Meerkat's parser gives it, the text
    after the closing ``---`` line without its leading newlines (research/frameworks.md §1: "body =
    text after that ``\n---`` with leading ``\n`` stripped"), so a skill injected from the bundle
    reads byte for byte as one from a Meerkat filesystem source.  Meerkat cuts just after the
    ``\n---`` that opens the closing line, so what follows the dashes on that line (the ``\r`` of a
    CRLF file, trailing blanks) starts the body too."""
    doc = skill.document
    body = doc.body
    head = doc.text[: len(doc.text) - len(body)] if doc.frontmatter is not None and doc.text.endswith(body) else ""
    start = head.rfind("\n---")
    if start >= 0 and head[start + 4 :].rstrip("\n").count("\n") == 0:
        body = head[start + 4 :] + body
    return body.lstrip("\n")


def wire_document(skill: SourceSkill) -> dict[str, Any]:
    """``WireSkillDocument``: the descriptor plus ``body`` (``wire_body``)."""
    return {**wire_descriptor(skill), "body": wire_body(skill)}


def write(out: Path, rel: str, data: bytes) -> None:
    """Write ``out/rel`` (creating folders); ``rel`` is a checked posix path below ``out``."""
    path = out / rel
    try:
        fh = open(path, "wb")
    except FileNotFoundError:
        os.makedirs(path.parent, exist_ok=True)
        fh = open(path, "wb")
    with writing(path), fh:
        fh.write(data)
