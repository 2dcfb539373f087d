"""Collection-wide rules (codes C8xx): checks that need every skill of a linted root."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Sequence

from ....discover.walk import path_key
from ....model import ItemKind, Severity
from ..registry import Finding, RuleContext, rule

REC = frozenset({"recommended"})
NAMED = frozenset({ItemKind.SKILL, ItemKind.LIGHTWEIGHT})


def _name(ctx: RuleContext) -> str | None:
    name = ctx.meta.get("name")
    if not isinstance(name, str):
        return None
    name = name.strip()
    if not name:
        return None
    return name if name.isascii() else unicodedata.normalize("NFKC", name)  # (NFKC keeps ASCII as it is)


@rule(
    "C801", "duplicate-name-in-root", "Several skills in one repository have the same `name`.",
    rationale="""
        Clients key skills by name: when two share one, one of them is hidden (first-found or
        last-found, depending on the client), and `/name` invokes whichever wins. Real repositories
        repeat names (`status` three times in one repository; 419 names in the survey). Each
        occurrence is reported and names the others. Symbolic-link aliases are one skill, not two.
    """,
    bad="engineering/status/SKILL.md and research/status/SKILL.md, both name: status",
    good="name: engineering-status and name: research-status",
    severity=Severity.WARNING, profiles=REC, scope="collection", kinds=NAMED, keys=("name",),
    agnix=("AS-025",),
)
def duplicate_skill_name(ctxs: Sequence[RuleContext]):
    groups: dict[str, list[RuleContext]] = {}
    for ctx in ctxs:
        name = _name(ctx)
        if name is not None:
            groups.setdefault(name, []).append(ctx)
    for name, group in groups.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda c: path_key(c.item.path))
        head = group[:6]  # (the five others shown are among the first six: no list of all per member)
        for ctx in group:
            others = [c.item.path for c in head if c is not ctx][:5]
            more = len(group) - 1 - len(others)
            shown = ", ".join(others) + (f" and {more} more" if more else "")
            yield ctx, Finding(f"skill name {name!r} is also used by {shown}", ctx.value("name"))


@rule(
    "C802", "description-budget-exceeded", "The descriptions of all skills in the root exceed the budget.",
    rationale="""
        Agents see every skill's name and description at startup, within a budget: a measurement
        of Claude Code found a ~16,000-character total that hid 21 of 63 skills; Codex allows 2%
        of the context or 8,000 characters; oxlint's `skill-index-budget` uses 20,000
        (research/registry.md §3.4, §3.2). skillc defaults to 16,000 characters of descriptions
        (`[lint] description-budget`) and reports once, on the first skill (in byte order of
        paths) that no longer fits, so you can see how many are pushed out. A Claude Code plugin
        (a folder with `.claude-plugin/plugin.json`) is installed on its own, so in a marketplace
        repository each plugin's skills have a budget of their own.
    """,
    bad="120 skills with 300-character descriptions (36,000 characters)",
    good="40 skills with 300-character descriptions (12,000 characters), or several roots",
    severity=Severity.WARNING, profiles=REC, scope="collection", kinds=NAMED, keys=("description",),
)
def description_budget_exceeded(ctxs: Sequence[RuleContext]):
    if not ctxs:
        return
    budget = ctxs[0].settings.description_budget
    # (each description's length read once: the contexts are every skill's, cold in memory by now)
    lengths = [len(d) if isinstance(d := c.meta.get("description"), str) else 0 for c in ctxs]
    if sum(lengths) <= budget:
        return  # (most repositories: nothing to split)
    plugins: dict[str, list[tuple[RuleContext, int]]] = {}
    plugin_of = _PluginRoots(ctxs[0].root)
    for ctx, n in zip(ctxs, lengths):
        plugins.setdefault(plugin_of(ctx.item.skill_dir), []).append((ctx, n))
    for plugin in sorted(plugins, key=path_key):
        yield from _over_budget(plugins[plugin], budget, plugin if len(plugins) > 1 else None)


class _PluginRoots:
    """``plugin_of(skill_dir)``: the nearest folder above it holding ``.claude-plugin/plugin.json``
    ("" when none: the repository is one installation)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.known: dict[str, bool] = {}
        self.plugins: dict[str, str] = {}  # skill's parent folder -> its plugin

    def __call__(self, skill_dir: str) -> str:
        # From the folder above the skill: a plugin holds skills (one stat per collection folder,
        # not one per skill; one walk up per folder, not per skill: skills share their parents)
        parent = skill_dir.rpartition("/")[0]
        plugin = self.plugins.get(parent)
        if plugin is None:
            plugin = ""
            folder = parent
            while folder:
                if self._is_plugin(folder):
                    plugin = folder
                    break
                folder = folder.rpartition("/")[0]
            self.plugins[parent] = plugin
        return plugin

    def _is_plugin(self, folder: str) -> bool:
        if folder not in self.known:
            self.known[folder] = (self.root / folder / ".claude-plugin" / "plugin.json").is_file()
        return self.known[folder]


def _over_budget(skills: list[tuple[RuleContext, int]], budget: int, plugin: str | None):
    """``skills``: (context, description length) pairs of one installation."""
    ordered = sorted(skills, key=lambda pair: path_key(pair[0].item.path))
    lengths = [n for _, n in ordered]
    total = sum(lengths)
    if total <= budget:
        return
    where = f" in the plugin {plugin}" if plugin else ""
    running = 0
    for i, ((ctx, _), n) in enumerate(zip(ordered, lengths)):
        running += n
        if running > budget:
            beyond = sum(1 for m in lengths[i:] if m)
            yield ctx, Finding(
                f"descriptions total {total:,} characters over {sum(1 for m in lengths if m):,} skills{where}, above the "
                f"{budget:,}-character budget; from this skill on, {beyond:,} may be hidden from agents",
                ctx.value("description"))
            return
