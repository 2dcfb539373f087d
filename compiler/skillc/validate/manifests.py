"""Claude Code plugin manifests: ``.claude-plugin/marketplace.json`` and ``.claude-plugin/plugin.json``.

Skill repositories often carry these beside their skills (research/registry.md §2.1).  Discovery
lists them (``Discovery.manifests``); this stage reads each (I/O at the edge: ``read_manifest``),
then checks it with pure functions: the structure against ``schemas/claude-*.schema.json``, then
what ``claude plugin validate`` checks beyond it (names, reserved names, source forms, ``./`` paths
without ``..``), and what it misses (listed skill folders that do not exist, listed skills whose
SKILL.md fails the specification, duplicate plugin names).  Rules G1xx (``rules/builtin/manifests.py``).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..layout import MANIFEST_DIR, MANIFEST_NAMES, MARKETPLACE
from ..model import Diagnostic, Position
from .rules.builtin.manifests import (
    DUPLICATE_PLUGIN_NAME,
    LISTED_FOLDER_MISSING,
    LISTED_SKILL_INVALID,
    MANIFEST_METADATA_MISSING,
    MANIFEST_NOT_JSON,
    MANIFEST_PATH_INVALID,
    MANIFEST_RESERVED_NAME,
    MANIFEST_STRUCTURE,
    PLUGIN_NAME_INVALID,
    PLUGIN_NAME_NOT_KEBAB_CASE,
    PLUGIN_VERSION_NOT_SEMVER,
)
from .rules.registry import Rule

MAX_MANIFEST_BYTES = 1024 * 1024  # a manifest is a page of JSON; never read a huge one whole

# Claude Code's reserved marketplace names (registry.md §2.1), and the prefix it blocks too.
RESERVED_MARKETPLACES = frozenset({
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace",
    "anthropic-plugins", "agent-skills", "knowledge-work-plugins", "life-sciences", "anthropic-agent-skills",
})
RESERVED_PREFIXES = ("claude-for-",)
# Names that pass as Anthropic's own (`claude-…`, `anthropic-…`): claude plugin validate rejects them
# unless the manifest is Anthropic's (its owner's or author's address is at anthropic.com).
IMPERSONATING = re.compile(r"^(?:claude|anthropic)(?:-|$)")
PLUGIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # what Claude Code accepts
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # what the Claude.ai marketplace sync accepts
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
SHA = re.compile(r"^[0-9a-f]{40}$")
COMPONENT_KEYS = ("commands", "agents", "skills", "hooks", "mcpServers", "lspServers", "outputStyles")


@dataclass(frozen=True, slots=True)
class Manifest:
    """One manifest file as read: its data (None when it is not JSON) and where each key is."""

    path: str  # root-relative posix path of the file
    kind: str  # "marketplace" | "plugin"
    data: Any
    positions: Mapping[tuple, Position]
    error: Diagnostic | None = None  # unreadable or not JSON

    @property
    def base(self) -> str:
        """The folder the manifest's relative paths start from: the parent of `.claude-plugin/`."""
        return posixpath.dirname(posixpath.dirname(self.path))

    def at(self, *path: Any) -> Position:
        """The position of a key (or list item), else of the nearest enclosing key, else line 1."""
        while path:
            pos = self.positions.get(tuple(path))
            if pos is not None:
                return pos
            path = path[:-1]
        return Position(1, 1)


@dataclass(frozen=True, slots=True)
class SkillVerdict:
    """What lint found in one skill folder, for the manifest rules that look into listed skills."""

    errors: tuple[str, ...]  # codes of the specification and parse errors of its SKILL.md


# ----------------------------------------------------------------------------------------- edge


def is_manifest(rel: str) -> bool:
    parent, _, name = rel.rpartition("/")
    return name in MANIFEST_NAMES and (parent == MANIFEST_DIR or parent.endswith("/" + MANIFEST_DIR))


def read_manifest(root: str, rel: str) -> Manifest:
    """Read and parse one manifest (never raises: a bad file becomes a G101 diagnostic)."""
    kind = "marketplace" if rel.endswith(MARKETPLACE) else "plugin"
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        return Manifest(rel, kind, None, {}, _diag(MANIFEST_NOT_JSON, rel, Position(0, 0), f"cannot read: {exc.strerror or exc}"))
    if len(raw) > MAX_MANIFEST_BYTES:
        return Manifest(rel, kind, None, {}, _diag(MANIFEST_NOT_JSON, rel, Position(0, 0),
                                                   f"the manifest is over {MAX_MANIFEST_BYTES:,} bytes; not read"))
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text)
    except UnicodeDecodeError:
        return Manifest(rel, kind, None, {}, _diag(MANIFEST_NOT_JSON, rel, Position(1, 1), "the manifest is not UTF-8 text"))
    except json.JSONDecodeError as exc:
        return Manifest(rel, kind, None, {}, _diag(MANIFEST_NOT_JSON, rel, Position(exc.lineno, exc.colno),
                                                   f"the manifest is not valid JSON: {exc.msg}"))
    return Manifest(rel, kind, data, _positions(text))


def _positions(text: str) -> Mapping[tuple, Position]:
    """Key positions from the YAML reader (JSON is YAML's flow style); none when it disagrees."""
    import yaml

    from ..parse.document import YamlLimitError, load_yaml

    try:
        return load_yaml(text)[1]
    except (yaml.YAMLError, YamlLimitError, ValueError, RecursionError):
        return {}  # (a tab or an escape YAML reads differently from JSON: the findings say line 1)


def skill_folder_state(root: str, rel: str) -> str:
    """``"skill"`` (holds SKILL.md), ``"skills"`` (holds skill folders), ``"folder"``, ``"file"`` or
    ``"missing"``."""
    full = os.path.join(root, rel) if rel else root
    if os.path.isfile(os.path.join(full, "SKILL.md")):
        return "skill"
    if os.path.isfile(full):
        return "file"
    try:
        with os.scandir(full) as it:
            children = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return "missing"
    return "skills" if any(os.path.isfile(os.path.join(c, "SKILL.md")) for c in children) else "folder"


def lint_manifests(root: str, paths: Iterable[str], verdicts: Mapping[str, SkillVerdict]) -> list[Diagnostic]:
    """Every manifest's diagnostics (the G1xx rules), reading the folders they name."""
    out: list[Diagnostic] = []
    for rel in paths:
        manifest = read_manifest(root, rel)
        if manifest.error is not None:
            out.append(manifest.error)
            continue
        out.extend(check_manifest(manifest, lambda p: skill_folder_state(root, p), verdicts))
    return out


# ----------------------------------------------------------------------------------------- checks

FolderState = Callable[[str], str]


def _diag(rule: Rule, path: str, pos: Position, message: str) -> Diagnostic:
    # (the rule's default severity: ``lint.finalize`` applies profile overrides to stage diagnostics)
    return rule.diagnostic(path, pos.line, pos.column, message)


def check_manifest(m: Manifest, folder: FolderState, verdicts: Mapping[str, SkillVerdict]) -> Iterator[Diagnostic]:
    issues = structure_issues(m)
    yield from issues
    if not isinstance(m.data, dict):
        return
    official = _is_anthropic(m.data)
    if m.kind == "marketplace":
        yield from _marketplace_name(m, official)
        plugins = m.data.get("plugins")
        if isinstance(plugins, list):
            yield from _duplicate_plugins(m, plugins)
            root = _plugin_root(m)
            for i, entry in enumerate(plugins):
                if isinstance(entry, dict):
                    yield from _plugin_entry(m, i, entry, root, official, folder, verdicts)
        if not isinstance(m.data.get("metadata"), dict) or not m.data["metadata"].get("description"):
            yield _diag(MANIFEST_METADATA_MISSING, m.path, m.at("name"), "the marketplace has no metadata.description "
                        "(claude plugin validate --strict fails on it)")
    else:
        yield from _plugin_name(m, m.data.get("name"), ("name",), official)
        yield from _version(m, ("version",))
        yield from _components(m, (), m.data, m.base, folder, verdicts)
        if "version" not in m.data:
            yield _diag(MANIFEST_METADATA_MISSING, m.path, m.at("name"), "the plugin has no version (claude plugin validate --strict "
                        "fails on it, and installs are cached per version)")


def structure_issues(m: Manifest) -> list[Diagnostic]:
    """The manifest against its JSON Schema (G102), in the schema module's words."""
    from .rules.builtin import schema

    name = f"claude-{m.kind}.schema.json"
    # (the schema module words the root as "frontmatter": here it is the manifest)
    return [_diag(MANIFEST_STRUCTURE, m.path, m.at(*issue.path),
                  f"{m.kind}: " + (issue.message.replace("frontmatter", "the manifest", 1) if not issue.path
                                   else issue.message))
            for issue in schema.issues(m.data, "", (), schema=name)]


def _is_anthropic(data: Mapping[str, Any]) -> bool:
    for key in ("owner", "author"):
        person = data.get(key)
        if isinstance(person, dict) and str(person.get("email", "")).lower().endswith("@anthropic.com"):
            return True
    return False


def _marketplace_name(m: Manifest, official: bool) -> Iterator[Diagnostic]:
    name = m.data.get("name")
    if not isinstance(name, str) or not name:
        return
    # (only the listed names and prefix: `claude-code-workflows` and other community marketplaces load)
    if (name in RESERVED_MARKETPLACES or name.startswith(RESERVED_PREFIXES)) and not official:
        yield _diag(MANIFEST_RESERVED_NAME, m.path, m.at("name"), f"marketplace name {name!r} is reserved for Anthropic; "
                    "Claude Code refuses to add it")
    elif not KEBAB.match(name):
        yield _diag(PLUGIN_NAME_NOT_KEBAB_CASE, m.path, m.at("name"), f"marketplace name {name!r} is not kebab-case")


def _plugin_name(m: Manifest, name: Any, where: tuple, official: bool) -> Iterator[Diagnostic]:
    if not isinstance(name, str) or not name:
        return  # (G102: required, a non-empty string)
    if not PLUGIN_NAME.match(name):
        yield _diag(PLUGIN_NAME_INVALID, m.path, m.at(*where), f"plugin name {name!r} may hold only letters, digits, '.', '_' "
                    "and '-', starting with a letter or digit")
    elif IMPERSONATING.match(name.lower()) and not official:
        yield _diag(MANIFEST_RESERVED_NAME, m.path, m.at(*where), f"plugin name {name!r} passes as one of Anthropic's own; "
                    "claude plugin validate reports it as an error")
    elif not KEBAB.match(name):
        yield _diag(PLUGIN_NAME_NOT_KEBAB_CASE, m.path, m.at(*where), f"plugin name {name!r} is not kebab-case (the Claude.ai "
                    "marketplace sync rejects it)")


def _version(m: Manifest, where: tuple) -> Iterator[Diagnostic]:
    node: Any = m.data
    for key in where:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, str) and not SEMVER.match(node):
        yield _diag(PLUGIN_VERSION_NOT_SEMVER, m.path, m.at(*where), f"version {node!r} is not semantic (MAJOR.MINOR.PATCH); "
                    "Claude Code compares versions to decide on updates")


def _duplicate_plugins(m: Manifest, plugins: list) -> Iterator[Diagnostic]:
    seen: dict[str, int] = {}
    for i, entry in enumerate(plugins):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in seen:
            yield _diag(DUPLICATE_PLUGIN_NAME, m.path, m.at("plugins", i, "name"), f"plugin name {name!r} is listed twice "
                        f"(first as plugins[{seen[name]}]); Claude Code refuses the marketplace")
        else:
            seen[name] = i


def _plugin_root(m: Manifest) -> str:
    metadata = m.data.get("metadata")
    prefix = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    if isinstance(prefix, str) and prefix and _path_problem(prefix, allow_bare=True) is None:
        return _join(m.base, prefix)
    return m.base


def _plugin_entry(m: Manifest, i: int, entry: dict, root: str, official: bool, folder: FolderState,
                  verdicts: Mapping[str, SkillVerdict]) -> Iterator[Diagnostic]:
    yield from _plugin_name(m, entry.get("name"), ("plugins", i, "name"), official)
    yield from _version(m, ("plugins", i, "version"))
    source = entry.get("source")
    where = ("plugins", i, "source")
    if isinstance(source, str):
        problem = _path_problem(source, allow_bare=False)
        if problem:
            yield _diag(MANIFEST_PATH_INVALID, m.path, m.at(*where), f"plugins[{i}].source {source!r} {problem} (a relative path), "
                        "or be a source object (github, url, git-subdir, npm)")
            return
        plugin_dir = _join(root, source)
        if folder(plugin_dir) == "missing":
            yield _diag(LISTED_FOLDER_MISSING, m.path, m.at(*where), f"plugins[{i}].source {source!r} is not a folder of the "
                        "repository (claude plugin validate does not check it; installing fails)")
            return
        yield from _components(m, ("plugins", i), entry, plugin_dir, folder, verdicts)
    elif isinstance(source, dict):
        sha = source.get("sha")
        if isinstance(sha, str) and not SHA.match(sha):
            yield _diag(MANIFEST_PATH_INVALID, m.path, m.at(*where, "sha"), f"plugins[{i}].source.sha must be a full 40-character "
                        "lowercase commit hash")
        path = source.get("path")
        if source.get("source") == "git-subdir" and isinstance(path, str) and ".." in path.split("/"):
            yield _diag(MANIFEST_PATH_INVALID, m.path, m.at(*where, "path"), f"plugins[{i}].source.path contains '..'")


def _path_problem(path: str, allow_bare: bool) -> str | None:
    """Why a manifest path is refused: Claude Code wants `./`-relative, forward slashes, no `..`."""
    if "\\" in path:
        return "uses backslashes; write forward slashes"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "is absolute; write it relative to the plugin, starting with './'"
    if ".." in path.split("/"):
        return "contains '..'; Claude Code refuses paths that leave the plugin"
    if not allow_bare and not path.startswith("./"):
        return "must start with './'"
    return None


def _join(base: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(base, path)) if base else posixpath.normpath(path)
    return "" if joined == "." else joined


def _components(m: Manifest, at: tuple, entry: Mapping[str, Any], plugin_dir: str, folder: FolderState,
                verdicts: Mapping[str, SkillVerdict]) -> Iterator[Diagnostic]:
    """Component paths (G107) and the skills a plugin publishes (G108 missing, G111 failing the spec)."""
    for key in COMPONENT_KEYS:
        value = entry.get(key)
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for j, path in enumerate(values):
            if not isinstance(path, str):
                continue
            where = (*at, key) if isinstance(value, str) else (*at, key, j)
            problem = _path_problem(path, allow_bare=False)
            if problem:
                yield _diag(MANIFEST_PATH_INVALID, m.path, m.at(*where), f"{key} path {path!r} {problem}")
            elif key == "skills":
                yield from _listed_skills(m, where, path, _join(plugin_dir, path), folder, verdicts)
            elif folder(_join(plugin_dir, path)) == "missing":
                yield _diag(LISTED_FOLDER_MISSING, m.path, m.at(*where), f"{key} path {path!r} does not exist in the plugin")
    if "skills" not in entry and folder(_join(plugin_dir, "skills")) == "skills":
        # (no list: Claude Code loads the default skills/ folder, whose skills must pass too)
        yield from _listed_skills(m, (*at, "name") if at else ("name",), "./skills", _join(plugin_dir, "skills"),
                                  folder, verdicts)


def _listed_skills(m: Manifest, where: tuple, shown: str, rel: str, folder: FolderState,
                   verdicts: Mapping[str, SkillVerdict]) -> Iterator[Diagnostic]:
    state = folder(rel)
    if state in ("missing", "folder", "file"):
        what = {"missing": "does not exist", "file": "is a file, not a skill folder"}.get(
            state, "holds no SKILL.md (nor skill folders)")
        yield _diag(LISTED_FOLDER_MISSING, m.path, m.at(*where), f"skills path {shown!r} {what}; Claude Code's validator does not "
                    "report it, and the plugin installs without the skill")
        return
    prefix = rel + "/" if rel else ""
    skills = [rel] if state == "skill" else sorted(d for d in verdicts if d.startswith(prefix) and "/" not in d[len(prefix):])
    for skill in skills:
        verdict = verdicts.get(skill)
        if verdict is not None and verdict.errors:
            yield _diag(LISTED_SKILL_INVALID, m.path, m.at(*where), f"listed skill {skill or '.'} fails the Agent Skills "
                        f"specification ({', '.join(verdict.errors)}); Claude Code loads it with weak checks")
