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
from typing import Any, Mapping, Sequence

from .config import ConfigFile, lint_config
from .errors import ConfigError
from .lint import LintConfig
from .resolve_types import Repository, Tier

DEFAULT_MAX_INJECTION_BYTES = 32_768
DEFAULT_INVENTORY_THRESHOLD = 12
DEFAULT_REFRESH_SECONDS = 300
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
    raise NotImplementedError
