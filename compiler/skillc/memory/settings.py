"""Memory settings, named as in seed 001 §9 (``MemorySettings``).

In ``skills.toml`` (or ``[tool.skillc.memory]`` of ``pyproject.toml``)::

    [memory]
    enabled = true

    [memory.retention]
    maxMemoriesPerNamespace = 100     # seed 001 default; the rest of a namespace goes to `pruned`
    autoDeleteAfterDays = 0           # 0 = never; older entries below autoDeleteMinImportance are pruned
    autoDeleteMinImportance = 0.3
    minImportance = 0.1               # skillc: effective importance below this is pruned (seed 000 prune)

    [memory.retrieval]
    maxMemoriesInPrompt = 10          # prompt.md
    minImportanceForRetrieval = 0.3   # prompt.md
    includedTypes = ["semantic", "episodic", "procedural"]

    [memory.consolidation]            # skillc: seed 000's thresholds
    compactionThreshold = 0.90        # TF-IDF cosine above which near-duplicates are merged
    promptBudgetChars = 2000
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..config.files import ConfigFile
from ..errors import ConfigError
from .model import TYPES


@dataclass(frozen=True, slots=True)
class MemorySettings:
    enabled: bool = True
    max_memories_per_namespace: int = 100
    auto_delete_after_days: int = 0
    auto_delete_min_importance: float = 0.3
    min_importance: float = 0.1
    max_memories_in_prompt: int = 10
    min_importance_for_retrieval: float = 0.3
    included_types: tuple[str, ...] = TYPES
    compaction_threshold: float = 0.90
    prompt_budget_chars: int = 2000

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "retention": {
                "maxMemoriesPerNamespace": self.max_memories_per_namespace,
                "autoDeleteAfterDays": self.auto_delete_after_days,
                "autoDeleteMinImportance": self.auto_delete_min_importance,
                "minImportance": self.min_importance,
            },
            "retrieval": {
                "maxMemoriesInPrompt": self.max_memories_in_prompt,
                "minImportanceForRetrieval": self.min_importance_for_retrieval,
                "includedTypes": list(self.included_types),
            },
            "consolidation": {
                "compactionThreshold": self.compaction_threshold,
                "promptBudgetChars": self.prompt_budget_chars,
            },
        }


# (table, key) -> (attribute, kind)
_KEYS: dict[tuple[str, str], tuple[str, str]] = {
    ("", "enabled"): ("enabled", "bool"),
    ("retention", "maxMemoriesPerNamespace"): ("max_memories_per_namespace", "count"),
    ("retention", "autoDeleteAfterDays"): ("auto_delete_after_days", "count"),
    ("retention", "autoDeleteMinImportance"): ("auto_delete_min_importance", "unit"),
    ("retention", "minImportance"): ("min_importance", "unit"),
    ("retrieval", "maxMemoriesInPrompt"): ("max_memories_in_prompt", "count"),
    ("retrieval", "minImportanceForRetrieval"): ("min_importance_for_retrieval", "unit"),
    ("retrieval", "includedTypes"): ("included_types", "types"),
    ("consolidation", "compactionThreshold"): ("compaction_threshold", "unit"),
    ("consolidation", "promptBudgetChars"): ("prompt_budget_chars", "count"),
}
_TABLES = {"retention", "retrieval", "consolidation", "extraction"}  # extraction: accepted, unused (no LLM)


def _coerce(value: Any, kind: str, name: str, cfg: ConfigFile | None) -> Any:
    def fail(msg: str) -> ConfigError:
        table, _, key = f"memory.{name}".rpartition(".")  # (looked up in its table: a top-level `enabled` is not it)
        return cfg.error(f"'memory.{name}' {msg}", key, table) if cfg else ConfigError(
            f"memory setting '{name}' {msg}")

    if kind == "bool":
        if not isinstance(value, bool):
            raise fail("must be true or false")
        return value
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise fail("must be a non-negative integer")
        return value
    if kind == "unit":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 <= value <= 1:
            raise fail("must be a number between 0 and 1")
        return float(value)
    if not isinstance(value, list) or not value or any(v not in TYPES for v in value):
        raise fail(f"must be a list of {', '.join(TYPES)}")
    return tuple(dict.fromkeys(value))


def settings_from_table(table: Mapping[str, Any], cfg: ConfigFile | None = None) -> MemorySettings:
    """Read a ``[memory]`` table (seed 001 §9 names)."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            if key not in _TABLES:
                raise (cfg.error if cfg else (lambda m, k=None: ConfigError(m)))(
                    f"unknown table [memory.{key}] (known: {', '.join(sorted(_TABLES))})", key)
            for sub, subvalue in value.items():
                spec = _KEYS.get((key, sub))
                if spec is None:
                    if key == "extraction":
                        continue
                    known = sorted(k for t, k in _KEYS if t == key)
                    raise (cfg.error if cfg else (lambda m, k=None: ConfigError(m)))(
                        f"unknown setting 'memory.{key}.{sub}' (known: {', '.join(known)})", sub)
                values[spec[0]] = _coerce(subvalue, spec[1], f"{key}.{sub}", cfg)
        else:
            spec = _KEYS.get(("", key))
            if spec is None:
                raise (cfg.error if cfg else (lambda m, k=None: ConfigError(m)))(
                    f"unknown setting 'memory.{key}'", key)
            values[spec[0]] = _coerce(value, spec[1], key, cfg)
    return MemorySettings(**values)


def settings_from_config(cfg: ConfigFile | None) -> MemorySettings:
    if cfg is None:
        return MemorySettings()
    cfg.check_top_level()  # ([memroy] would be ignored silently)
    table = cfg.data.get("memory", {})
    if not isinstance(table, dict):
        raise cfg.error("'memory' must be a table", "memory")
    return settings_from_table(table, cfg)


def with_overrides(settings: MemorySettings, **overrides: Any) -> MemorySettings:
    names = {f.name for f in fields(MemorySettings)}
    return replace(settings, **{k: v for k, v in overrides.items() if v is not None and k in names})
