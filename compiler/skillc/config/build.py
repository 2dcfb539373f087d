"""Build configuration: which repositories a build reads, in which precedence, with which settings.

Inputs (all optional):

* ``skills.toml`` in the seed 004 format, looked up at project level (``./skills.toml``,
  ``./.rkat/skills.toml``) then at user level (``~/.config/skillc/skills.toml``,
  ``~/.rkat/skills.toml``), or one explicit file (``--config``, which replaces the lookup).
  Repositories are merged project first, deduplicated by ``name`` (first wins); the scalar settings
  come from the first file found (Meerkat's rule: a project file's settings win whole).
* Plan Cascade's ``external-skills.json`` (next to the project-level config, or named by the
  ``external_skills`` key) and ``.plan-cascade/skills.json`` user skills (project, then home).

Everything is validated against the JSON Schemas in ``schemas/`` and every error names the file and
the line.  ``load_build_config`` is the only function that touches the filesystem; the rest is pure.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import secrets
from ..errors import ConfigError
from ..jsonio import load_json
from ..paths import shown_local_path
from ..resolve_types import DEFAULT_INVENTORY_THRESHOLD, DEFAULT_MAX_INJECTION_BYTES, Repository, Tier
from ..validate.lint import LintConfig
from .files import ConfigFile, find_lint_config, is_config_file, lint_config, quiet_is_dir

DEFAULT_REFRESH_SECONDS = 300
DEFAULT_TIMEOUT_SECONDS = 600  # a remote repository's whole fetch
REPOSITORY_TYPES = ("filesystem", "git", "zip", "http")
PROJECT_CONFIGS = ("skills.toml", ".rkat/skills.toml")
USER_CONFIGS = (".config/skillc/skills.toml", ".rkat/skills.toml")
EXTERNAL_SKILLS_FILE = "external-skills.json"
USER_SKILLS_FILE = ".plan-cascade/skills.json"
# Plan Cascade source types → seed 000 tiers.
_SOURCE_TIERS = {"builtin": Tier.BUILTIN, "submodule": Tier.EXTERNAL, "external": Tier.EXTERNAL, "user": Tier.USER}


@dataclass(frozen=True, slots=True)
class ExternalSkill:
    """One Plan Cascade skill entry (external-skills.json ``skills`` or a .plan-cascade user skill)."""

    name: str  # the entry's key / name in the JSON file
    id: str  # the canonical skill ID it resolves to (directory name relative to its repository root)
    repository: str  # the Repository.name that offers it
    source: str  # the Plan Cascade source name (``builtin``, ``vercel``, ``user-<name>``…)
    source_type: str  # builtin | submodule | user
    priority: int
    detect_files: tuple[str, ...] = ()
    detect_patterns: tuple[str, ...] = ()
    inject_into: tuple[str, ...] = ("implementation",)
    config_file: str = ""


@dataclass(frozen=True, slots=True)
class ExternalConfig:
    """What Plan Cascade's files add besides repositories: detection rules, phases and settings."""

    skills: tuple[ExternalSkill, ...] = ()  # in file order (config skills, then new user skills)
    settings: Mapping[str, Any] = field(default_factory=dict)  # max_skills_per_story, max_content_lines…
    files: tuple[str, ...] = ()  # the JSON files read

    def by_id(self) -> dict[str, ExternalSkill]:
        return {s.id: s for s in self.skills}


@dataclass(frozen=True)
class BuildConfig:
    """Everything ``skillc build`` needs to know before it opens a source.

    ``repositories`` are in declaration order (project config, user config, Plan Cascade files,
    then the embedded repository when included); each carries its tier and priority, so resolution
    needs nothing else.  ``config_files`` lists ``(path, sha256)`` of every file read, for the
    manifest.
    """

    repositories: tuple[Repository, ...]
    enabled: bool = True
    max_injection_bytes: int = DEFAULT_MAX_INJECTION_BYTES
    inventory_threshold: int = DEFAULT_INVENTORY_THRESHOLD
    include_embedded: bool = False
    lint: LintConfig = field(default_factory=LintConfig)
    config_files: tuple[tuple[str, str], ...] = ()
    external: ExternalConfig = field(default_factory=ExternalConfig)

    def settings(self) -> dict[str, object]:
        """The settings ``resolve`` stores in ``Resolution.settings`` (and the manifest)."""
        return {
            "enabled": self.enabled,
            "max_injection_bytes": self.max_injection_bytes,
            "inventory_threshold": self.inventory_threshold,
            "include_embedded": self.include_embedded,
        }


def load_build_config(paths: Sequence[str], config_path: str | None, *, cwd: Path, home: Path,
                      env: Mapping[str, str]) -> BuildConfig:
    """Read and merge the configuration of a build.

    * ``paths`` (command-line PATH arguments) become filesystem repositories of the project tier in
      the order given; they replace the configured repositories (the config still supplies the
      settings, ``[lint]`` and ``include_embedded``).
    * ``config_path`` (``--config``) is read alone instead of the project/user lookup.
    * No paths and no configuration file: the embedded repository alone.

    Raises ``ConfigError`` (naming file and line) for anything invalid.
    """
    files = _config_files(config_path, cwd=cwd, home=home)
    parsed = _parse_files(files, paths, env)
    scalars = parsed[0].scalars if parsed else {}
    # [lint] as `skillc lint` finds it for the project (skills.toml, .rkat/skills.toml, then
    # pyproject.toml's [tool.skillc], up to the repository's top); a user-level file's otherwise.
    lint_file = files[0][0] if files else None
    if config_path is None:
        lint_file = find_lint_config(cwd) or lint_file
    lint = lint_config(lint_file)
    seen: set[str] = set()
    if paths:
        repositories = _path_repositories(paths, cwd, seen)
    else:  # first wins: project before user, then declaration order
        repositories = _first_of_each_name((r for result in parsed for r in result.repositories), seen)
    external, json_files = ExternalConfig(), []
    if not paths:
        external, json_files, ext_repos = _plan_cascade_files(parsed, files, config_path, cwd=cwd, home=home)
        repositories += _first_of_each_name(ext_repos, seen)
    include_embedded = bool(scalars.get("include_embedded", False))
    if not repositories and not files and not json_files:
        include_embedded = True  # no paths, no configuration: the embedded repository alone
    if include_embedded:
        from ..resources import embedded_skills

        repositories.append(Repository("embedded", "embedded", str(embedded_skills()), Tier.BUILTIN,
                                       Tier.BUILTIN.default_priority))
    _check_repositories(repositories, files, cwd)
    return BuildConfig(
        repositories=tuple(_with_order(r, i) for i, r in enumerate(repositories)),
        enabled=bool(scalars.get("enabled", True)),
        max_injection_bytes=int(scalars.get("max_injection_bytes", DEFAULT_MAX_INJECTION_BYTES)),
        inventory_threshold=int(scalars.get("inventory_threshold", DEFAULT_INVENTORY_THRESHOLD)),
        include_embedded=include_embedded,
        lint=lint,
        config_files=_config_hashes(files, lint_file, json_files),
        external=external,
    )


def _config_files(config_path: str | None, *, cwd: Path, home: Path) -> list[tuple[ConfigFile, str]]:
    """The skills.toml files read, with their level, in precedence order."""
    files: list[tuple[ConfigFile, str]] = []
    if config_path is not None:
        explicit = Path(config_path)
        if not explicit.is_absolute():
            explicit = cwd / explicit
        if not explicit.is_file():  # (a FIFO or device is refused too: reading one could block forever)
            kind = "not a regular file" if explicit.exists() else "configuration file not found"
            raise ConfigError(f"{config_path}: {kind}")
        files.append((_read_toml(explicit), "project"))
        return files
    # One file found twice (a build in the home folder: ./.rkat/skills.toml is ~/.rkat/skills.toml;
    # or one lookup name linked to another) is read once, at the first level that finds it.
    found: set[Path] = set()
    for base, names, level in ((cwd, PROJECT_CONFIGS, "project"), (home, USER_CONFIGS, "user")):
        for rel in names:
            if is_config_file(base / rel) and (base / rel).resolve() not in found:
                found.add((base / rel).resolve())
                files.append((_read_toml(base / rel), level))
    return files


def _parse_files(files: Sequence[tuple[ConfigFile, str]], paths: Sequence[str],
                 env: Mapping[str, str]) -> list[_Parsed]:
    # ${VAR} is expanded only in the repositories the build reads: not in one an earlier file's of
    # the same name supersedes, nor in any when PATH arguments replace them (a user-level entry
    # needing a token must not fail a build that never reads it).
    parsed: list[_Parsed] = []
    claimed: set[str] = set()
    for cfg, level in files:
        parsed.append(_parse_skills_toml(cfg, level, env, used=lambda name: not paths and name not in claimed))
        claimed.update(r.name for r in parsed[-1].repositories)
    return parsed


def _path_repositories(paths: Sequence[str], cwd: Path, seen: set[str]) -> list[Repository]:
    """PATH arguments as filesystem repositories of the project tier."""
    repositories: list[Repository] = []
    given: set[str] = set()
    for p in paths:
        location = Path(os.path.normpath(p if Path(p).is_absolute() else cwd / p))  # (no '..' in the bundle)
        if os.path.realpath(location) in given:
            continue  # a folder given twice (`build skills skills/`) is read once, as lint reads it
        given.add(os.path.realpath(location))
        # Named by its path from the build folder, normalised (`a/../b` is `b`, `./b/` is `b`,
        # `../repo` stays so: a sibling checkout names the same on every machine), however it was
        # given (`/home/ci/repo` from `/home/ci/work` is `../repo`).  The name is published
        # (provenance, shadowing, the wire metadata): the bundle must not depend on spelling or on
        # where a checkout lives, and names no path of the build machine.
        name = _unique(shown_local_path(location, cwd), seen)
        repositories.append(Repository(name, "filesystem", str(location), Tier.PROJECT,
                                       Tier.PROJECT.default_priority))
    return repositories


def _first_of_each_name(repos: Iterable[Repository], seen: set[str]) -> list[Repository]:
    """The repositories whose name is not ``seen`` yet (the first of a name wins)."""
    out: list[Repository] = []
    for repo in repos:
        if repo.name not in seen:
            seen.add(repo.name)
            out.append(repo)
    return out


def _plan_cascade_files(parsed: Sequence[_Parsed], files: Sequence[tuple[ConfigFile, str]], config_path: str | None,
                        *, cwd: Path, home: Path) -> tuple[ExternalConfig, list[Path], list[Repository]]:
    """Plan Cascade's external-skills.json (named by ``external_skills`` or next to the project) and
    user skills: what they configure, the JSON files read and the repositories they add."""
    ext_path = None
    if parsed and parsed[0].external_skills:
        ext_path = parsed[0].external_skills
        if not ext_path.is_file():
            raise files[0][0].error(f"external_skills file not found: {ext_path}", "external_skills")
    elif config_path is None and (cwd / EXTERNAL_SKILLS_FILE).is_file():
        ext_path = cwd / EXTERNAL_SKILLS_FILE
    user_files = [] if config_path is not None else [
        f for f in (cwd / USER_SKILLS_FILE, home / USER_SKILLS_FILE) if f.is_file()]
    if not (ext_path or user_files):
        return ExternalConfig(), [], []
    ext_repos, external = _plan_cascade(ext_path, user_files, home=home)
    return external, [f for f in (ext_path, *user_files) if f], ext_repos


def _check_repositories(repositories: Sequence[Repository], files: Sequence[tuple[ConfigFile, str]],
                        cwd: Path) -> None:
    """At least one repository, and no name that would publish a secret."""
    if not repositories:  # (a skills.toml that holds only [lint]: an empty registry is never what was meant)
        shown = [os.path.relpath(cfg.path, cwd) for cfg, _ in files]
        where = ", ".join(p if not p.startswith("..") else str(cfg.path) for p, (cfg, _) in zip(shown, files))
        raise ConfigError(f"{where}: no repository to build (no [[repositories]], and include_embedded is false)",
                          hint="add a [[repositories]] table (name, type = \"filesystem\", path = \"skills\"), "
                               "pass the folders to build (skillc build skills/), or set include_embedded = true")
    for r in repositories:  # (a PATH argument is named by its path; Plan Cascade by its JSON key)
        if secrets.scan(r.name):
            raise ConfigError(f"{r.config_file or 'PATH argument'}: {_secret_name(r.name)}")


def _config_hashes(files: Sequence[tuple[ConfigFile, str]], lint_file: ConfigFile | None,
                   json_files: Sequence[Path]) -> tuple[tuple[str, str], ...]:
    """``(path, sha256)`` of every configuration file read, for the manifest."""
    read = [cfg for cfg, _ in files]
    if lint_file is not None and all(lint_file.path.resolve() != cfg.path.resolve() for cfg in read):
        read.append(lint_file)  # (a pyproject.toml or a parent folder's file that only configures lint)
    hashes = tuple((str(cfg.path), cfg.sha256 or _sha256(cfg.text.encode("utf-8"))) for cfg in read)
    return hashes + tuple((str(f), _sha256(f.read_bytes())) for f in json_files)


# ---------------------------------------------------------------- helpers

def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _unique(name: str, seen: set[str]) -> str:
    candidate, n = name, 2
    while candidate in seen:
        candidate, n = f"{name}#{n}", n + 1
    seen.add(candidate)
    return candidate


def _with_order(repo: Repository, order: int) -> Repository:
    from dataclasses import replace

    return replace(repo, order=order)


def _read_toml(path: Path) -> ConfigFile:
    from .files import read_config_file

    if path.name == "pyproject.toml":
        raise ConfigError(f"{path}: a build configuration is a skills.toml (pyproject.toml holds only [tool.skillc.lint])")
    return read_config_file(path)


@dataclass(frozen=True, slots=True)
class _Parsed:
    scalars: dict[str, Any]
    repositories: tuple[Repository, ...]
    external_skills: Path | None


def _load_schema(name: str, _cache: dict[str, Any] = {}) -> Any:  # noqa: B006 - a module-level memo
    if name not in _cache:
        from ..resources import schema_path

        _cache[name] = json.loads(schema_path(name).read_text("utf-8"))
    return _cache[name]


def _schema_errors(schema_name: str, data: Any) -> list[Any]:
    import jsonschema

    # JSON Schema counts 1.0 as an integer; TOML and JSON keep them apart, and a `priority = 250.0`
    # let through would be published as 250.0 (Meerkat and Plan Cascade refuse a float there too).
    checker = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))
    strict = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=checker)
    validator = strict(_load_schema(schema_name))
    return sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])


def _error_path(error: Any) -> list[Any]:
    """Where an error is: the offending key itself for an unknown key."""
    path = list(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)' was unexpected", error.message)
        if extra:
            path.append(extra[0])
    return path


def _describe(error: Any) -> str:
    """A one-line reading of a jsonschema error, naming the key."""
    path = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p))
                   for i, p in enumerate(error.absolute_path))
    if error.validator == "additionalProperties" and error.absolute_path:
        extra = re.findall(r"'([^']+)' was unexpected", error.message)
        return f"unknown key(s) in {path}: {', '.join(extra) or error.message}"
    if error.validator == "additionalProperties":
        return error.message
    if error.validator == "required":
        return f"{path or 'the file'}: {error.message}"
    if error.validator in ("oneOf", "anyOf", "not", "if"):
        # include/exclude are a oneOf too (one glob or a list): "path or url" would send the user
        # to keys that are fine.
        if error.absolute_path and error.absolute_path[-1] in ("include", "exclude"):
            return f"{path}: must be a glob (a non-empty string) or a list of non-empty globs, " \
                   f"not {error.instance!r}"
        if path.startswith("repositories") or path.startswith("skills["):
            return f"{path}: give exactly one of 'path' or 'url' as the type requires"
        return f"{path}: must have exactly one of 'path' or 'url'"
    return f"{path}: {error.message}" if path else error.message


# ---------------------------------------------------------------- TOML lines

_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$", re.M)


def toml_line(cfg: ConfigFile, path: Sequence[Any]) -> int | None:
    """The line of ``path`` (e.g. ``("repositories", 2, "url")``) in a TOML file, best effort."""
    text = cfg.text
    if len(path) >= 2 and isinstance(path[1], int):
        array = str(path[0])
        headers = [m for m in _TABLE.finditer(text) if m.group(0).strip().startswith("[[")
                   and m.group(1).strip() == array]
        if path[1] < len(headers):
            start = headers[path[1]].start()
            nxt = next((m.start() for m in _TABLE.finditer(text, headers[path[1]].end())), len(text))
            if len(path) >= 3:
                key = re.compile(rf"^[ \t]*(\"?){re.escape(str(path[2]))}\1[ \t]*=", re.M)
                m = key.search(text, start, nxt)
                if m:
                    return text.count("\n", 0, m.start()) + 1
            return text.count("\n", 0, start) + 1
        if not headers:  # `repositories = [{ … }, { … }]`: the same tables, written inline
            span = _inline_table(text, array, path[1])
            if span is not None:
                start, end = span
                if len(path) >= 3:
                    key = re.compile(rf"[{{,][ \t\r\n]*(\"?){re.escape(str(path[2]))}\1[ \t]*=")
                    m = key.search(text, start, end)
                    if m:
                        return text.count("\n", 0, m.end()) + 1
                return text.count("\n", 0, start) + 1
    if path:
        return cfg.line_of(str(path[-1] if not isinstance(path[-1], int) else path[0]))
    return None


def _inline_table(text: str, array: str, index: int) -> tuple[int, int] | None:
    """Where the ``index``-th inline table of ``array = [ {…}, … ]`` starts and ends (strings and
    comments skipped), or None."""
    m = re.compile(rf"^[ \t]*(\"?){re.escape(array)}\1[ \t]*=[ \t]*\[", re.M).search(text)
    if m is None:
        return None
    pos, depth, n, start = m.end(), 0, -1, None  # depth: brackets and braces open inside the array
    while pos < len(text):
        ch = text[pos]
        if ch == "#":
            pos = text.find("\n", pos)
            if pos < 0:
                return None
            continue
        if ch in "\"'":
            quote = text[pos:pos + 3] if text[pos:pos + 3] in ('"""', "'''") else ch
            end = pos + len(quote)
            while True:
                end = text.find(quote, end)
                if end < 0:
                    return None
                escapes = 0
                while quote[0] == '"' and text[end - 1 - escapes] == "\\":
                    escapes += 1
                if escapes % 2:
                    end += 1  # (an escaped quote)
                    continue
                break
            pos = end + len(quote)
            continue
        if ch in "[{":
            if depth == 0 and ch == "{":
                n += 1
                start = pos if n == index else start
            depth += 1
        elif ch in "]}":
            if depth == 0:
                return None  # the end of the array
            depth -= 1
            if depth == 0 and start is not None:
                return start, pos + 1
        pos += 1
    return None


def _toml_error(cfg: ConfigFile, path: Sequence[Any], message: str) -> ConfigError:
    line = toml_line(cfg, path)
    return ConfigError(f"{cfg.path}:{line}: {message}" if line else f"{cfg.path}: {message}")


# ---------------------------------------------------------------- ${VAR}

_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def expand_env(value: str, env: Mapping[str, str]) -> str:
    """Expand ``${VAR}`` (Meerkat's rule): a missing variable, ``${}`` or an unclosed ``${`` is an error.

    Raises ``ValueError`` with a message that names the variable (never its value).
    """
    out: list[str] = []
    i = 0
    while True:
        j = value.find("${", i)
        if j < 0:
            out.append(value[i:])
            return "".join(out)
        out.append(value[i:j])
        k = value.find("}", j + 2)
        if k < 0:
            raise ValueError("'${' without a closing '}'")
        name = value[j + 2:k]
        if not name:
            raise ValueError("empty variable reference '${}'")
        if not _VAR.fullmatch(name):
            raise ValueError(f"malformed variable name '${{{name}}}' (letters, digits and _ only)")
        if name not in env:
            raise ValueError(f"environment variable {name} is not set")
        out.append(env[name])
        i = k + 1


# ---------------------------------------------------------------- skills.toml

def _config_base(cfg: ConfigFile) -> Path:
    """Relative paths in a config resolve against its directory (the project root for .rkat/)."""
    parent = cfg.path.resolve().parent
    return parent.parent if parent.name == ".rkat" else parent


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _local_path(base: Path, value: str) -> str:
    """A path from a configuration file: ``~`` expanded, relative to ``base``, normalised (the
    bundle shows it, relative to the build folder or whole: never with a '..' in it)."""
    path = Path(os.path.expanduser(value))
    return os.path.normpath(path if path.is_absolute() else base / path)


def _is_git_path(url: str) -> bool:
    """Whether git reads ``url`` as a local path: no ``scheme://`` and not scp-like ``host:path``
    (git's rule: a ':' before any '/')."""
    if _SCHEME.match(url):
        return False
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or (0 <= slash < colon)


def _safe_relative(value: str) -> bool:
    p = PurePosixPath(value)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in value


def _parse_skills_toml(cfg: ConfigFile, level: str, env: Mapping[str, str],
                       used: Callable[[str], bool] = lambda name: True) -> _Parsed:
    """The file's settings and repositories.  Every entry is checked; a repository ``used`` says the
    build does not read is left out before its ``${VAR}`` are expanded."""
    data = cfg.data
    cfg.check_top_level()
    errors = _schema_errors("skills-toml.schema.json", data)
    if errors:
        e = errors[0]
        raise _toml_error(cfg, _error_path(e), _describe(e))
    scalars = {k: data[k] for k in ("enabled", "max_injection_bytes", "inventory_threshold", "include_embedded")
               if k in data}
    base = _config_base(cfg)
    repos: list[Repository] = []
    names: set[str] = set()
    default_tier = Tier.PROJECT if level == "project" else Tier.USER
    for i, entry in enumerate(data.get("repositories", [])):
        checked = _RepositoryEntry(cfg, ("repositories", i), entry)
        tier, priority, skills_root = checked.check(names, default_tier)
        if used(entry["name"]):
            repos.append(checked.repository(tier, priority, skills_root, base, env))
    ext = data.get("external_skills")
    external = None
    if ext:
        external = Path(_local_path(base, ext))
    return _Parsed(scalars, tuple(repos), external)


@dataclass(frozen=True, slots=True)
class _RepositoryEntry:
    """One ``[[repositories]]`` table of a skills.toml, checked in two steps: what holds without the
    environment (every entry), then its ``${VAR}`` expanded (only the entries the build reads)."""

    cfg: ConfigFile
    where: tuple[str, int]
    entry: Mapping[str, Any]

    def err(self, key: str | None, message: str) -> ConfigError:
        return _toml_error(self.cfg, (*self.where, key) if key else self.where,
                           f"repository {self.entry['name']!r}: {message}")

    def check(self, names: set[str], default_tier: Tier) -> tuple[Tier, int, str]:
        """The tier, priority and skills root, each checked; the name is added to ``names``."""
        entry, err = self.entry, self.err
        if secrets.scan(entry["name"]):  # (before any message that would name it)
            raise _toml_error(self.cfg, (*self.where, "name"), _secret_name(entry["name"]))
        if entry["name"] in names:
            raise err("name", "declared twice in this file")
        names.add(entry["name"])
        tier = Tier(entry.get("tier", default_tier.value))
        priority = entry.get("priority", tier.default_priority)
        low, high = tier.priority_range
        if priority < low or (high is not None and priority > high):
            span = f"{low}-{high}" if high is not None else f"{low} or more"
            raise err("priority", f"priority {priority} is outside the {tier.value} tier's range ({span})")
        skills_root = entry.get("skills_root", "").strip("/")
        if skills_root and not _safe_relative(skills_root):
            raise err("skills_root", f"skills_root {skills_root!r} must be a relative path inside the repository")
        if entry["type"] == "git" and str(entry.get("git_ref", "")).startswith("-"):
            raise err("git_ref", "a git_ref must not start with '-' (git would read it as an option)")
        if entry["type"] == "git" and entry.get("ref_type", "branch") == "commit" and not re.fullmatch(
                r"[0-9a-fA-F]{7,64}", entry.get("git_ref", "")):
            raise err("git_ref", "a commit git_ref must be a hexadecimal commit id")
        return tier, priority, skills_root

    def expanded(self, base: Path, env: Mapping[str, str]) -> tuple[dict[str, Any], str]:
        """``url`` and ``auth_token`` with their ``${VAR}`` expanded, and the repository's location."""
        entry, err = self.entry, self.err
        values: dict[str, Any] = {}
        for key in ("url", "auth_token"):
            if key in entry:
                try:
                    values[key] = expand_env(entry[key], env)
                except ValueError as exc:
                    raise err(key, f"{key}: {exc}") from None
        url = values.get("url")
        if url is not None and not url.strip():  # (a git url "" would name the config's folder, a zip url nothing)
            raise err("url", f"url {entry['url']!r} is empty once expanded (a variable set to an empty value?)")
        if url is not None and url.startswith("-"):
            raise err("url", "a url must not start with '-' (git would read it as an option)")
        if "path" in entry:
            location = _local_path(base, entry["path"])
        elif entry["type"] == "git" and _is_git_path(values["url"]):  # (git would read it from skillc's cache folder)
            location = values["url"] = _local_path(base, values["url"])
        else:
            location = values["url"]
        url = values.get("url")
        if entry["type"] == "http" and url is not None and not url.lower().startswith(("http://", "https://")):
            raise err("url", f"an http repository's url must start with http:// or https://, not {url.split(':')[0]!r}")
        if entry.get("auth_header") and not values.get("auth_token"):
            raise err("auth_header", "auth_header needs an auth_token")
        return values, location

    def repository(self, tier: Tier, priority: int, skills_root: str, base: Path,
                   env: Mapping[str, str]) -> Repository:
        entry, rtype = self.entry, self.entry["type"]
        values, location = self.expanded(base, env)
        include = entry.get("include", [])
        exclude = entry.get("exclude", [])
        return Repository(
            name=entry["name"], type=rtype, location=location, tier=tier, priority=priority,
            skills_root=skills_root,
            git_ref=entry.get("git_ref", "main") if rtype == "git" else None,
            ref_type=entry.get("ref_type", "branch") if rtype == "git" else None,
            auth_header=entry.get("auth_header"), auth_token=values.get("auth_token"),
            refresh_seconds=entry.get("refresh_seconds", DEFAULT_REFRESH_SECONDS),
            timeout_seconds=entry.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS),
            include=tuple([include] if isinstance(include, str) else include),
            exclude=tuple([exclude] if isinstance(exclude, str) else exclude),
            config_file=f"{self.cfg.path}:{toml_line(self.cfg, self.where) or 0}",
            publish_lightweight=entry.get("publish_lightweight", False),
            publish_conventions=entry.get("publish_conventions", False),
        )


# ---------------------------------------------------------------- JSON lines

def json_lines(text: str) -> dict[tuple, int]:
    """Map every key path (and array index path) of a JSON document to the line it starts on."""
    from json.decoder import scanstring

    lines: dict[tuple, int] = {}
    ws = re.compile(r"[ \t\n\r]*")
    scalar = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")

    def line(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def value(pos: int, path: tuple) -> int:
        pos = ws.match(text, pos).end()
        lines.setdefault(path, line(pos))
        ch = text[pos:pos + 1]
        if ch == "{":
            pos = ws.match(text, pos + 1).end()
            if text[pos:pos + 1] == "}":
                return pos + 1
            while True:
                pos = ws.match(text, pos).end()
                key_line = line(pos)
                key, pos = scanstring(text, pos + 1)
                lines[path + (key,)] = key_line
                pos = ws.match(text, pos).end() + 1  # ':'
                pos = value(pos, path + (key,))
                lines[path + (key,)] = key_line
                pos = ws.match(text, pos).end()
                if text[pos] == "}":
                    return pos + 1
                pos += 1  # ','
        if ch == "[":
            pos = ws.match(text, pos + 1).end()
            if text[pos:pos + 1] == "]":
                return pos + 1
            i = 0
            while True:
                pos = value(pos, path + (i,))
                pos = ws.match(text, pos).end()
                if text[pos] == "]":
                    return pos + 1
                pos, i = pos + 1, i + 1
        if ch == '"':
            return scanstring(text, pos + 1)[1]
        m = scalar.match(text, pos)
        return m.end() if m else pos + 1

    try:
        value(0, ())
    except (ValueError, IndexError):
        pass
    return lines


@dataclass(frozen=True, slots=True)
class _JsonFile:
    path: Path
    data: Any
    lines: dict[tuple, int]

    def error(self, path: Sequence[Any], message: str) -> ConfigError:
        p = tuple(path)
        while p and p not in self.lines:
            p = p[:-1]
        line = self.lines.get(p)
        return ConfigError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")


def _read_json(path: Path, schema: str) -> _JsonFile:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    jf = _JsonFile(path, data, json_lines(text))
    if not isinstance(data, dict):
        raise jf.error((), "the file must hold a JSON object")
    errors = _schema_errors(schema, data)
    if errors:
        e = errors[0]
        raise jf.error(_error_path(e), _describe(e))
    return jf


def _secret_name(name: str) -> str:
    """Why a repository name holding a likely secret is refused: the bundle publishes the name in
    every descriptor (``skillc.repository``), the manifest, the selection index and the site."""
    return (f"repository name {secrets.redact(name)[0]!r} holds a likely secret ({secrets.scan(name)[0].kind}); "
            "the bundle publishes repository names: rename it")


# A Plan Cascade skill's folder, checked once the skills that stay are known: the file and key path
# that name it, the folder, and a hint for the error
_Folder = tuple["_JsonFile", tuple, Path, str]


def _plan_cascade(ext_path: Path | None, user_files: Sequence[Path], *, home: Path
                  ) -> tuple[list[Repository], ExternalConfig]:
    """Repositories and detection rules from external-skills.json and .plan-cascade/skills.json files.

    Each Plan Cascade skill becomes one repository (its own priority): the directory holding the
    skill is the root and the skill directory name is the canonical ID.
    """
    repos: list[Repository] = []
    skills: dict[str, ExternalSkill] = {}
    settings: dict[str, Any] = {"max_skills_per_story": 3, "max_content_lines": 200, "cache_enabled": True}
    folders: dict[str, _Folder] = {}
    if ext_path is not None:
        settings.update(_config_skills(ext_path, repos, skills, folders))
    _user_skills(user_files, repos, skills, folders)
    _check_folders(folders)
    files = tuple(str(p) for p in ([ext_path] if ext_path else []) + list(user_files))
    return repos, ExternalConfig(tuple(skills.values()), settings, files)


def _skill_repository(name: str, skill_dir: Path, tier: Tier, priority: int, where: str) -> tuple[Repository, str]:
    """The repository of one Plan Cascade skill (the folder holding it), and the skill's ID."""
    skill_id = skill_dir.name
    return Repository(name=name, type="filesystem", location=str(skill_dir.parent), tier=tier,
                      priority=priority, include=(skill_id,), config_file=where), skill_id


def _external_skill(name: str, entry: Mapping[str, Any], skill_id: str, repo: Repository, source: str,
                    source_type: str, priority: int, config_file: str) -> ExternalSkill:
    detect = entry.get("detect", {})
    return ExternalSkill(name, skill_id, repo.name, source, source_type, priority,
                         tuple(detect.get("files", ())), tuple(detect.get("patterns", ())),
                         tuple(entry.get("inject_into", ("implementation",))), config_file)


def _config_skills(ext_path: Path, repos: list[Repository], skills: dict[str, ExternalSkill],
                   folders: dict[str, _Folder]) -> Mapping[str, Any]:
    """external-skills.json: its skills added to ``repos``, ``skills`` and ``folders``; its settings."""
    jf = _read_json(ext_path, "external-skills.schema.json")
    base = ext_path.resolve().parent
    sources = jf.data.get("sources", {})
    for name, entry in jf.data.get("skills", {}).items():
        where = ("skills", name)
        src = sources.get(entry["source"])
        if src is None:
            raise jf.error((*where, "source"), f"skill {name!r}: unknown source {entry['source']!r} "
                           f"(declared: {', '.join(sorted(sources)) or 'none'})")
        tier = _SOURCE_TIERS[src["type"]]
        # (Plan Cascade's loader sorts and prints `priority` read with a default of 0: detection
        # does too; the repository itself takes the tier's default place among skillc's sources)
        given = entry.get("priority")
        priority = tier.default_priority if given is None else given
        low, high = tier.priority_range
        if priority < low or (high is not None and priority > high):
            raise jf.error((*where, "priority"), f"skill {name!r}: priority {priority} is outside the "
                           f"{src['type']} range ({low}-{high})")
        if "path" not in src:
            raise jf.error(("sources", entry["source"]), f"source {entry['source']!r}: only local sources "
                           "(a 'path') are supported; clone it and give its path")
        if not _safe_relative(entry["skill_path"]) and entry["skill_path"]:
            raise jf.error((*where, "skill_path"), f"skill {name!r}: skill_path must be relative")
        src_dir = Path(os.path.normpath(Path(src["path"]) if Path(src["path"]).is_absolute() else base / src["path"]))
        skill_dir = src_dir / entry["skill_path"] if entry["skill_path"] else src_dir
        line = jf.lines.get(where, 0)
        repo, skill_id = _skill_repository(f"{entry['source']}/{name}", skill_dir, tier, priority,
                                           f"{ext_path}:{line}")
        repos.append(repo)
        hint = " (a submodule not checked out? git submodule update --init --recursive)" \
            if src["type"] == "submodule" else ""
        folders[name] = (jf, (*where, "skill_path"), skill_dir, hint)
        skills[name] = _external_skill(name, entry, skill_id, repo, entry["source"], src["type"],
                                       0 if given is None else given, str(ext_path))
    return jf.data.get("settings", {})


def _user_skills(user_files: Sequence[Path], repos: list[Repository], skills: dict[str, ExternalSkill],
                 folders: dict[str, _Folder]) -> None:
    """.plan-cascade/skills.json user skills (the project file overrides the home file for the same
    name) added to ``repos``, ``skills`` and ``folders``."""
    merged: dict[str, tuple[_JsonFile, int, dict[str, Any]]] = {}
    for path in reversed(list(user_files)):  # home first, then project overrides
        jf = _read_json(path, "plan-cascade-skills.schema.json")
        seen_here: set[str] = set()
        for i, entry in enumerate(jf.data.get("skills", [])):
            if entry["name"] in seen_here:
                raise jf.error(("skills", i, "name"), f"duplicate skill name {entry['name']!r}")
            seen_here.add(entry["name"])
            merged[entry["name"]] = (jf, i, entry)
    for name, (jf, i, entry) in merged.items():
        where = ("skills", i)
        priority = entry.get("priority", Tier.USER.default_priority)
        line = jf.lines.get(where, 0)
        if "url" in entry:
            raise jf.error((*where, "url"), f"user skill {name!r}: URL skills are not supported in a build; "
                           "download it and give its 'path'")
        raw = Path(os.path.expanduser(entry["path"]))
        skill_dir = raw if raw.is_absolute() else (jf.path.resolve().parent / raw)
        if skill_dir.name.lower() == "skill.md":
            skill_dir = skill_dir.parent
        skill_dir = Path(os.path.normpath(skill_dir))
        existing = skills.get(name)
        if existing is not None and priority <= existing.priority:
            continue  # Plan Cascade: a user skill replaces a config skill only with a strictly higher priority
        if existing is not None:  # replaced: Plan Cascade no longer loads the config skill at all
            repos[:] = [r for r in repos if r.name != existing.repository]
        repo, skill_id = _skill_repository(f"user-{name}", skill_dir, Tier.USER, priority, f"{jf.path}:{line}")
        repos.append(repo)
        folders[name] = (jf, (*where, "path"), skill_dir, "")
        skills[name] = _external_skill(name, entry, skill_id, repo, f"user-{name}", "user", priority, str(jf.path))


def _check_folders(folders: Mapping[str, _Folder]) -> None:
    # The repository is the folder holding the skill, so a missing skill folder would only make it
    # "offer no skill" (a warning naming the wrong folder) and the build would succeed without it.
    for name, (jf, where_key, skill_dir, hint) in folders.items():
        if not quiet_is_dir(skill_dir):
            error = jf.error(where_key, f"skill {name!r}: {skill_dir} is not a directory{hint}")
            error.exit_code = 1  # (as a skills.toml repository whose path is missing: the inputs fail)
            raise error
