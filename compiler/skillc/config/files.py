"""Configuration files: ``skills.toml`` (``[lint]`` and the seed 004 keys) and ``pyproject.toml``
(``[tool.skillc]``).  Every error names the file and, where it can be found, the line."""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..discover.walk import DiscoveryOptions
from ..errors import ConfigError
from ..validate.lint import LintConfig
from ..validate.rules.loader import selects_a_rule
from ..validate.rules.registry import PROFILES, LintSettings

CONFIG_NAMES = ("skills.toml", ".rkat/skills.toml", "pyproject.toml")
# The top-level keys skillc reads: schemas/skills-toml.schema.json's properties, and the [lint] and
# [memory] tables (a test keeps the two lists in step).
TOP_LEVEL_KEYS = ("enabled", "max_injection_bytes", "inventory_threshold", "include_embedded", "external_skills",
                  "repositories", "lint", "memory")
PYPROJECT_KEYS = ("lint", "memory")  # [tool.skillc] configures lint and memory; builds read skills.toml


@dataclass(frozen=True, slots=True)
class ConfigFile:
    path: Path
    data: dict[str, Any]  # the skillc table: all of skills.toml, or [tool.skillc] of pyproject.toml
    text: str = field(repr=False, default="")
    sha256: str = ""  # of the file's bytes, for the manifest

    def line_of(self, key: str, table: str | None = None) -> int | None:
        """The first line that assigns ``key``, else the header of a table named ``key`` (TOML does
        not keep positions; this is close enough).  ``table`` (``"lint"``, ``"memory.retention"``):
        look in that table first, so `profile` in [lint] is not found in a [search] table above it."""
        k = re.escape(key)
        start = 0
        if self.path.name == "pyproject.toml":  # (only [tool.skillc…] is skillc's: `version` in [project] is not)
            table_m = re.compile(r"^[ \t]*\[[ \t]*tool\.skillc\b", re.M).search(self.text)
            start = table_m.start() if table_m else 0
        if table:
            t = r"(?:tool\.skillc\.)?" + re.escape(table)
            header = re.compile(rf"^[ \t]*\[[ \t]*{t}[ \t]*\][ \t]*(?:#.*)?$", re.M).search(self.text, start)
            if header:
                end = re.compile(r"^[ \t]*\[", re.M).search(self.text, header.end())
                m = re.compile(rf"^[ \t]*([\"']?){k}\1[ \t]*[=.]", re.M).search(  # (`select.x = 1` too)
                    self.text, header.end(), end.start() if end else len(self.text))
                if m:
                    return self.text.count("\n", 0, m.start()) + 1
            m = re.compile(rf"^[ \t]*{t}\.([\"']?){k}\1[ \t]*=", re.M).search(self.text, start)  # lint.profile = …
            if m:
                return self.text.count("\n", 0, m.start()) + 1
        m = re.compile(rf"^[ \t]*([\"']?){k}\1[ \t]*=", re.M).search(self.text, start) or \
            re.compile(rf"^[ \t]*\[\[?[ \t]*(?:[\w.\"'-]+\.)?([\"']?){k}\1[ \t]*\]", re.M).search(self.text, start)
        return self.text.count("\n", 0, m.start()) + 1 if m else None

    def check_top_level(self) -> None:
        """Refuse a top-level key skillc does not know when it looks like a typo of one it does, or
        is not a table (``inventory_treshold = 5``, ``[lnt]``, ``[[repository]]``).  Other tables
        are left alone in skills.toml (Meerkat reads the file too); in pyproject.toml's
        ``[tool.skillc]``, which is skillc's alone, every unknown key is refused."""
        ours = self.path.name == "pyproject.toml"
        known = PYPROJECT_KEYS if ours else TOP_LEVEL_KEYS
        for key, value in self.data.items():
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
            if ours or close or not isinstance(value, dict):
                hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
                raise self.error(f"unknown key {key!r}{hint}", str(key))

    def error(self, message: str, key: str | None = None, table: str | None = None) -> ConfigError:
        line = self.line_of(key, table) if key else None
        if line is None and key and table:  # (a key in an inline table, `lint = { … }`: that line)
            line = self.line_of(table.rsplit(".", 1)[-1])
        where = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{where}: {message}")


_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _toml_limit(text: str, exc: BaseException) -> str:
    """``line: message`` for an integer over Python's int-string conversion limit or nesting that
    exhausts the stack (tomllib raises ValueError or RecursionError, not TOMLDecodeError)."""
    if isinstance(exc, RecursionError):
        return "1: invalid TOML: nested too deeply"
    limit = sys.get_int_max_str_digits()
    digits = re.search(r"[0-9_]{%d,}" % (limit + 1), text) if limit else None
    line = text.count("\n", 0, digits.start()) + 1 if digits else 1
    length = len(digits.group(0).replace("_", "")) if digits else 0
    return f"{line}: invalid TOML: an integer of {length:,} digits (the limit is {limit:,})"


def read_config_file(path: Path) -> ConfigFile:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    try:
        # Bytes decoded as they are: read_text would turn CRLF into LF, and the manifest's hash of
        # the file would not be the file's.  A leading BOM (Windows editors write one) is not TOML
        # but Meerkat's parser skips it, so skillc does too.
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise ConfigError(f"{path}:{line}:{column}: not UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    import tomllib  # (here: a repository without skillc.toml, the usual lint, never parses TOML)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib puts the place at the end of its message: moved to the front, as every other
        # configuration error reads (path:line:column: message).
        message = str(exc)
        at = _TOML_AT.search(message)
        if at:
            where, message = f"{path}:{at.group(1)}:{at.group(2)}", message[:at.start()]
        elif message.endswith(" (at end of document)"):
            where, message = f"{path}:{text.count(chr(10)) + 1}", message.removesuffix(" (at end of document)")
        else:
            where = str(path)
        raise ConfigError(f"{where}: invalid TOML: {message}") from None
    except (ValueError, RecursionError) as exc:  # (what tomllib lets through from int() or its recursion)
        raise ConfigError(f"{path}:{_toml_limit(text, exc)}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        data = tool.get("skillc", {}) if isinstance(tool, dict) else None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: 'tool.skillc' must be a table ([tool.skillc])")
    return ConfigFile(path, data, text, hashlib.sha256(raw).hexdigest())


def find_config(start: Path) -> ConfigFile | None:
    """The first skills.toml, .rkat/skills.toml or pyproject.toml with [tool.skillc] in ``start``."""
    for name in CONFIG_NAMES:
        candidate = start / name
        if is_config_file(candidate):
            cfg = read_config_file(candidate)
            if name != "pyproject.toml" or cfg.data:
                return cfg
    return None


def find_lint_config(start: Path) -> ConfigFile | None:
    """The configuration ``skillc lint`` uses for a root: ``find_config`` in the root, then in each
    parent folder, stopping after the repository's top (the folder holding ``.git``)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        cfg = find_config(folder)
        if cfg is not None:
            return cfg
        if quiet_exists(folder / ".git"):
            return None
    return None


def is_config_file(path: Path) -> bool:
    """Whether the lookup takes ``path``: a regular file.  Something else of that name (a folder, a
    FIFO) is an error, not passed over: the build would quietly fall back to the embedded skills."""
    if quiet_is_file(path):
        return True
    if quiet_exists(path):
        raise ConfigError(f"{path}: not a regular file, so it cannot be the configuration it is named as",
                          hint="rename or remove it")
    return False


def quiet_is_file(path: Path) -> bool:
    """``path.is_file()``, False in a folder that cannot be searched (its files are D105 in lint)."""
    try:
        return path.is_file()
    except PermissionError:
        return False


def quiet_is_dir(path: Path) -> bool:
    """``path.is_dir()``, False below a folder that cannot be searched."""
    try:
        return path.is_dir()
    except PermissionError:
        return False


def quiet_exists(path: Path) -> bool:
    """``path.exists()``, False in a folder that cannot be searched."""
    try:
        return path.exists()
    except PermissionError:
        return False


def _str_list(cfg: ConfigFile, table: dict[str, Any], key: str, prefix: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise cfg.error(f"'{prefix}{key}' must be a list of strings", key, prefix.rstrip("."))
    return tuple(value)


def _codes(cfg: ConfigFile, values: tuple[str, ...], key: str) -> tuple[str, ...]:
    """Rule selectors as the command line takes them: upper-cased, each naming at least one rule."""
    codes = tuple(v.strip().upper() for v in values if v.strip())
    for code in codes:
        if not selects_a_rule(code):
            raise cfg.error(f"'lint.{key}': no rule code starts with {code!r} (see `skillc rules`)", key, "lint")
    return codes


def _glob(pattern: str) -> str:
    """A path glob of the configuration as lint matches it: paths are compared without a leading
    ``./``, so ``"./skills/legacy/*"`` (relative to the file's folder, written explicitly) must
    lose it, or it would match nothing without a word."""
    while pattern.startswith("./"):
        pattern = pattern[2:].lstrip("/")
    return pattern


def _globs(pattern: str) -> tuple[str, ...]:
    """``pattern`` (see ``_glob``) and, for each ``**/`` in it, the spelling where it matches no
    folder: fnmatch's ``*`` crosses ``/`` but ``**/`` still wants one, so ``"**/backups"`` missed a
    top-level ``backups`` and ``"skills/**/legacy/*"`` missed ``skills/legacy/x``, where Ruff's and
    .gitignore's ``**/`` match zero folders or more."""
    out = [_glob(pattern)]
    for p in out:  # (grows as it goes: every combination of kept and dropped `**/`)
        for i in range(len(p)):
            if p.startswith("**/", i) and (i == 0 or p[i - 1] == "/"):
                dropped = p[:i] + p[i + 3:]
                if dropped and dropped not in out:
                    out.append(dropped)
    return tuple(out)


def lint_config(cfg: ConfigFile | None, **overrides: Any) -> LintConfig:
    """Build a LintConfig from a file's ``[lint]`` table, then apply command-line overrides."""
    table: dict[str, Any] = {}
    if cfg is not None:
        cfg.check_top_level()
        table = cfg.data.get("lint", {})
        if not isinstance(table, dict):
            raise cfg.error("'lint' must be a table", "lint")
    prefix = "lint."
    kw: dict[str, Any] = {}
    if cfg is not None:
        known = {"profile", "select", "extend-select", "ignore", "per-path-ignores", "tools", "max-body-lines",
                 "max-body-tokens", "description-budget", "lightweight", "conventions", "exclude", "secret-scan"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise cfg.error(f"unknown key(s) in [lint]: {', '.join(unknown)}; known: {', '.join(sorted(known))}", unknown[0],
                            "lint")
        profile = table.get("profile", "recommended")
        if profile not in PROFILES:
            raise cfg.error(f"'lint.profile' must be one of {', '.join(PROFILES)}", "profile", "lint")
        kw["profile"] = profile
        for key in ("select", "extend-select", "ignore"):
            kw[key.replace("-", "_")] = _codes(cfg, _str_list(cfg, table, key, prefix), key)
        ppi = table.get("per-path-ignores", {})
        if not isinstance(ppi, dict) or not all(isinstance(v, (list, str)) for v in ppi.values()) or not all(
                isinstance(c, str) for v in ppi.values() if isinstance(v, list) for c in v):
            raise cfg.error("'lint.per-path-ignores' must map globs to lists of codes", "per-path-ignores", "lint")
        per_path: list[tuple[str, tuple[str, ...]]] = []
        for g, c in ppi.items():
            codes = _codes(cfg, tuple([c] if isinstance(c, str) else c), "per-path-ignores")
            per_path.extend((glob, codes) for glob in _globs(g))
        kw["per_path_ignores"] = tuple(per_path)
        settings: dict[str, Any] = {"tools": _str_list(cfg, table, "tools", prefix)}
        for key, attr in (("max-body-lines", "max_body_lines"), ("max-body-tokens", "max_body_tokens"),
                          ("description-budget", "description_budget")):
            if key in table:
                if not isinstance(table[key], int) or isinstance(table[key], bool) or table[key] < 1:
                    raise cfg.error(f"'lint.{key}' must be a positive integer", key, "lint")
                settings[attr] = table[key]
        if "secret-scan" in table:
            if not isinstance(table["secret-scan"], bool):
                raise cfg.error("'lint.secret-scan' must be true or false", "secret-scan", "lint")
            settings["secret_scan"] = table["secret-scan"]
        kw["settings"] = LintSettings(**settings)
        disc: dict[str, Any] = {}
        for key in ("lightweight", "conventions"):
            if key in table:
                if not isinstance(table[key], bool):
                    raise cfg.error(f"'lint.{key}' must be true or false", key, "lint")
                disc[key] = table[key]
        disc["exclude"] = tuple(glob for g in _str_list(cfg, table, "exclude", prefix) for glob in _globs(g))
        kw["discovery"] = DiscoveryOptions(**disc)
        kw["source"] = str(cfg.path)
    for key, value in overrides.items():
        if value is None or value == ():
            continue
        if key == "ignore" and "ignore" in kw:
            value = kw["ignore"] + tuple(value)
        kw[key] = value
    return LintConfig(**kw)


def anchored(config: LintConfig, root: str | os.PathLike[str]) -> LintConfig:
    """``config`` for linting ``root``: its ``per-path-ignores`` and ``exclude`` globs are relative
    to the folder of the file it came from (``config.source``), and the paths lint sees are relative
    to ``root``, so the one is mapped onto the other (``discover.config_relative``).  Unchanged
    without a source file."""
    if not config.source:
        return config
    root_abs = os.path.realpath(root)
    folder = os.path.realpath(os.path.dirname(os.path.abspath(config.source)))
    if os.path.basename(folder) == ".rkat":  # (.rkat/skills.toml speaks for the project around it)
        folder = os.path.dirname(folder)
    base = strip = ""
    if folder != root_abs and folder.startswith(root_abs.rstrip(os.sep) + os.sep):  # the file is below the root
        strip = Path(os.path.relpath(folder, root_abs)).as_posix()
    else:
        rel = os.path.relpath(root_abs, folder)
        base = "" if rel == "." else Path(rel).as_posix()
    return replace(config, ignore_base=base, ignore_strip=strip,
                   discovery=replace(config.discovery, exclude_base=base, exclude_strip=strip))
