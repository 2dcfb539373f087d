"""The ``skill://`` namespace of a bundle and the MCP skills extension's entries (SEP-2640), pure.

Every published file of a skill is a resource ``skill://<skill path>/<file path>``.  The skill path
is the skill's ID with its last segment replaced by the skill's flat name (``flatnames``, the one
rule the well-known index uses too): the extension wants the last segment to be the skill's
``name`` and to match ``^[a-z0-9]+(-[a-z0-9]+)*$``.  For almost every skill that is the ID itself
(``extraction/email-extractor``); two skills whose leaves collide get the longer flat name
(``python/python-testing``).  Flat names are unique, so skill paths are too.

The extension also wants an entry's ``frontmatter`` to equal the served ``SKILL.md``'s, field for
field, with ``name`` equal to the path's last segment.  A published ``SKILL.md`` whose frontmatter
already says so is served byte for byte; any other (a name that is not the flat name, no
frontmatter, a lower-case ``skill.md``) is served rewritten: its frontmatter with ``name`` set to
the flat name (and ``description`` from the wire descriptor when it has none) above the same body.
"""

from __future__ import annotations

import datetime
import hashlib
import mimetypes
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import yaml

from ..flatnames import assign_flat_names
from ..parse.document import parse_document

SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
DIRECTORY_MIME = "inode/directory"
_SKILL_FILE_NAMES = ("SKILL.md", "skill.md")
# (Python's table lacks these, or names them per platform: a listing must not depend on the machine)
_MIME_BY_SUFFIX = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
                   ".py": "text/x-python", ".sh": "text/x-shellscript", ".json": "application/json",
                   ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
                   ".js": "text/javascript", ".ts": "text/plain", ".csv": "text/csv", ".html": "text/html",
                   ".xml": "application/xml", ".svg": "image/svg+xml", ".png": "image/png",
                   ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".pdf": "application/pdf",
                   ".zip": "application/zip"}


@dataclass(frozen=True, slots=True)
class SkillPlace:
    """Where a skill lives in the ``skill://`` namespace."""

    skill_id: str
    path: str  # the skill path: collection path + "/" + flat name
    name: str  # the flat name (the path's last segment)

    @property
    def root_uri(self) -> str:
        return SCHEME + quote(self.path, safe="/")

    def uri(self, file_path: str) -> str:
        return SCHEME + quote(f"{self.path}/{file_path}", safe="/")


@dataclass(frozen=True, slots=True)
class ServedFile:
    """A file as the server serves it: its path in the skill, bytes' SHA-256 and size, MIME type."""

    path: str
    sha256: str
    size: int
    mime_type: str


@dataclass(frozen=True, slots=True)
class ServedSkillFile:
    """The ``SKILL.md`` served for a skill: its bytes (``None`` while they are the published file's,
    read on demand), the frontmatter they carry, and their digest."""

    content: bytes | None
    frontmatter: Mapping[str, Any]
    sha256: str
    size: int


def place_skills(skill_ids: Iterable[str]) -> dict[str, SkillPlace]:
    """Every skill's place, by ID."""
    names = assign_flat_names(skill_ids).names
    out = {}
    for skill_id, name in names.items():
        collection = skill_id.rsplit("/", 1)[0] if "/" in skill_id else ""
        out[skill_id] = SkillPlace(skill_id, f"{collection}/{name}" if collection else name, name)
    return out


def uri_path(uri: str) -> str | None:
    """The decoded path of a ``skill://`` URI (``None`` for another scheme)."""
    if not uri.startswith(SCHEME):
        return None
    return unquote(uri[len(SCHEME):].split("?", 1)[0].split("#", 1)[0]).rstrip("/")


def locate(path: str, by_path: Mapping[str, SkillPlace]) -> tuple[SkillPlace, str] | None:
    """The skill a ``skill://`` path lies in (the longest skill path that prefixes it) and the path
    inside the skill (``""`` for its root)."""
    parts = path.split("/")
    for n in range(len(parts), 0, -1):
        place = by_path.get("/".join(parts[:n]))
        if place is not None:
            return place, "/".join(parts[n:])
    return None


def mime_type(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    suffix = name[name.rfind("."):] if "." in name else ""
    return _MIME_BY_SUFFIX.get(suffix) or mimetypes.guess_type(name, strict=True)[0] or "application/octet-stream"


def skill_file_of(files: Sequence[Any]) -> Any | None:
    """The published SKILL.md (or skill.md) among a skill's files (objects with ``.path``)."""
    for name in _SKILL_FILE_NAMES:
        for f in files:
            if f.path == name:
                return f
    return None


def _json_value(value: Any) -> Any:
    """A YAML value as JSON carries it (dates as their ISO text, keys as text)."""
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN has no JSON form
        return None
    return value


def served_skill_file(raw: bytes | None, published_sha256: str | None, name: str, description: str,
                      wire_body: str) -> ServedSkillFile:
    """The SKILL.md to serve for a skill named ``name``: the published bytes when their frontmatter
    already names it so and describes it, else the rewritten file (see the module's note)."""
    meta: Mapping[str, Any] = {}
    body = wire_body
    if raw is not None:
        doc = parse_document(raw, SKILL_FILE)
        if doc.frontmatter is not None and isinstance(doc.frontmatter.data, Mapping):
            meta = doc.frontmatter.data
            body = doc.body
            desc = meta.get("description")
            if meta.get("name") == name and isinstance(desc, str) and desc.strip() and published_sha256:
                return ServedSkillFile(None, _json_value(meta), published_sha256, len(raw))
        elif doc.frontmatter is None and not doc.text.startswith("---"):
            body = doc.text
    fields = dict(_json_value(meta))
    fields["name"] = name
    if not isinstance(fields.get("description"), str) or not fields["description"].strip():
        fields["description"] = description
    text = "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1_000_000) + "---\n" + body
    data = text.encode("utf-8")
    return ServedSkillFile(data, fields, hashlib.sha256(data).hexdigest(), len(data))


def served_files(files: Sequence[Any], skill_file: ServedSkillFile) -> list[ServedFile]:
    """A skill's files as served: SKILL.md first (the served one), then the others in path order."""
    out = [ServedFile(SKILL_FILE, skill_file.sha256, skill_file.size, "text/markdown")]
    out += [ServedFile(f.path, f.sha256, f.size, mime_type(f.path)) for f in files
            if f.path not in _SKILL_FILE_NAMES]
    return out


def skill_entry(place: SkillPlace, skill_file: ServedSkillFile, files: Sequence[ServedFile]) -> dict[str, Any]:
    """The extension's ``Skill`` entry: URI of SKILL.md, its frontmatter, every file with digest and size."""
    return {"uri": place.uri(SKILL_FILE), "frontmatter": dict(skill_file.frontmatter),
            "resources": [{"uri": place.uri(f.path), "digest": "sha256:" + f.sha256, "size": f.size}
                          for f in files]}


def directory_children(place: SkillPlace, files: Sequence[ServedFile], folder: str) -> list[dict[str, Any]] | None:
    """The direct children of ``folder`` (``""``: the skill root) as ``Resource`` metadata, files and
    sub-folders in name order; ``None`` when the skill has no such folder."""
    prefix = folder + "/" if folder else ""
    entries: dict[str, dict[str, Any]] = {}
    found = not folder
    for f in files:
        if not f.path.startswith(prefix):
            continue
        found = True
        head, _, rest = f.path[len(prefix):].partition("/")
        if rest:
            entries.setdefault(head, {"uri": place.uri(prefix + head), "name": head, "mimeType": DIRECTORY_MIME})
        else:
            entries[head] = {"uri": place.uri(f.path), "name": head, "mimeType": f.mime_type, "size": f.size}
    if not found:
        return None
    return [entries[k] for k in sorted(entries, key=lambda k: k.encode("utf-8", "surrogatepass"))]


def namespace_children(folder: str, skill_paths: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The folders directly below ``folder`` (``""``: the namespace root) on the way to skills: a
    nested skill's root inside a skill, a collection's sub-collections and skills."""
    prefix = folder + "/" if folder else ""
    out: dict[str, dict[str, Any]] = {}
    for path in skill_paths:
        if path.startswith(prefix) and path != folder:
            head = path[len(prefix):].split("/", 1)[0]
            out.setdefault(head, {"uri": SCHEME + quote(prefix + head, safe="/"), "name": head,
                                  "mimeType": DIRECTORY_MIME})
    return out


def merge_children(*groups: Mapping[str, dict[str, Any]] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Directory entries from several sources, one per name (the first wins), in name order."""
    merged: dict[str, dict[str, Any]] = {}
    for group in groups:
        for entry in (group.values() if isinstance(group, Mapping) else group):
            merged.setdefault(entry["name"], entry)
    return [merged[k] for k in sorted(merged, key=lambda k: k.encode("utf-8", "surrogatepass"))]
