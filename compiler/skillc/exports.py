"""``skillc export --target``: one set of skills written in the layout each client installs from
(issue 19 item 2; the consuming commands: docs/guides/clients.md).

The command (``commands.archive.export``) gathers the skills and passes the same gates as ``pack``
(names import would take, no likely secret); this module lays them out.  Every folder target is
written into a fresh staging folder beside ``OUT`` and renamed into place when complete, so a failed
export leaves nothing; files are copied byte for byte with their executable bit, in ID order, with
nothing that depends on the clock (``SOURCE_DATE_EPOCH`` for the zips and the git commit).

Targets:

* ``claude`` / ``skill``: the Claude-compatible zip (one folder per skill), ``.skill`` as Anthropic's
  ``package_skill.py`` names it (written by the command, as before);
* ``skills-folder``: ``skills/<flat name>/…`` (``--git``: committed as a repository), which
  ``npx skills add`` and ``openskills install`` take from a path or a git URL;
* ``marketplace``: a Claude Code plugin marketplace, one plugin per skill (the plugin is what a
  user installs and enables, so this gives the granularity of ``npx skills --skill NAME``; flat
  names are unique and valid plugin names, and collections nest, which plugins cannot);
* ``well-known``: the discovery tree alone (``emit.wellknown``'s formats), archives beside the index;
* ``shared-folder``: seed 002's shared ``Skills/`` folder in its three layers: ``skills.md`` (the
  metadata layer: each skill's name, description and folder), ``<name>/SKILL.md`` (instructions)
  and the skill's other files (resources).
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .emit.skills import skill_zip
from .emit.wellknown import (
    INDEX,
    LEGACY_INDEX,
    DiscoverySkill,
    agent_skills_index,
    legacy_index,
    write_legacy_tree,
)
from .errors import SkillcError
from .model import ItemKind
from .parse.document import parse_document


class Target(str, enum.Enum):
    CLAUDE = "claude"
    SKILL = "skill"
    MARKETPLACE = "marketplace"
    SKILLS_FOLDER = "skills-folder"
    WELL_KNOWN = "well-known"
    SHARED_FOLDER = "shared-folder"

    @property
    def is_zip(self) -> bool:
        return self in (Target.CLAUDE, Target.SKILL)


# Marketplace names Claude Code reserves (research/registry.md §2.1): refused as --name.
RESERVED_MARKETPLACES = frozenset({
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace",
    "anthropic-plugins", "agent-skills", "knowledge-work-plugins", "life-sciences", "anthropic-agent-skills"})
_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
_SPDX = re.compile(r"^[A-Za-z0-9.+-]+( (AND|OR|WITH) [A-Za-z0-9.+-]+)*$")
_LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "LICENCE.txt", "COPYING")


@dataclass(frozen=True, slots=True)
class MarketplaceOptions:
    name: str  # kebab-case, not reserved
    owner: str
    version: str  # semver, each plugin's and the marketplace's

    def problem(self) -> str | None:
        if not _KEBAB.fullmatch(self.name):
            return f"--name {self.name!r} is not kebab-case ([a-z0-9-])"
        if self.name in RESERVED_MARKETPLACES or self.name.startswith(("claude-for-", "anthropic-")):
            return f"--name {self.name!r} is reserved by Claude Code"
        if not _SEMVER.fullmatch(self.version):
            return f"--plugin-version {self.version!r} is not a semantic version (1.2.3)"
        if not self.owner.strip():
            return "--owner is empty"
        return None


@dataclass(frozen=True, slots=True)
class ExportSkill:
    """One skill to export: its files on disk, SKILL.md first (the names as its folder holds them)."""

    id: str
    flat_name: str
    name: str  # the frontmatter's `name` (what `npx skills add <folder>` installs it as), or ""
    description: str
    license: str  # the frontmatter's `license`, or ""
    files: tuple[tuple[str, str], ...]  # (path in the skill folder, file to read)

    def members(self, top: str) -> list[tuple[str, str]]:
        return [(f"{top}/{path}", source) for path, source in self.files]


def export_skill(skill_id: str, flat_name: str, files: Sequence[tuple[str, str]]) -> ExportSkill:
    """An ``ExportSkill`` with the description and licence read from its SKILL.md (``files[0]``)."""
    raw = Path(files[0][1]).read_bytes()
    meta = parse_document(raw, "SKILL.md", ItemKind.SKILL).meta
    def text(key: str) -> str:
        value = meta.get(key)
        return value.strip() if isinstance(value, str) else ""

    return ExportSkill(skill_id, flat_name, text("name"), text("description"), text("license"), tuple(files))


def shared_names(skills: Sequence[ExportSkill]) -> dict[str, list[str]]:
    """Frontmatter names more than one exported skill carries (name -> IDs): a client that installs a
    folder's skills by that name (``npx skills add <folder>``) would put them in one place."""
    by_name: dict[str, list[str]] = {}
    for skill in skills:
        if skill.name:
            by_name.setdefault(skill.name, []).append(skill.id)
    return {n: ids for n, ids in by_name.items() if len(ids) > 1}


# ---------------------------------------------------------------- writing a folder

class FolderWriter:
    """Files written below a staging folder (``place`` copies one, keeping its executable bit)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[str] = []

    def write(self, rel: str, data: bytes, executable: bool = False) -> None:
        dest = self.root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        os.chmod(dest, 0o755 if executable else 0o644)
        self.written.append(rel)

    def place(self, rel: str, source: str) -> None:
        self.write(rel, Path(source).read_bytes(), os.stat(source).st_mode & 0o111 != 0)

    def skill(self, top: str, skill: ExportSkill) -> None:
        for name, source in skill.members(top):
            self.place(name, source)


def write_folder(out: Path, fill: Callable[[FolderWriter], None]) -> list[str]:
    """Run ``fill`` into a fresh folder beside ``out`` and rename it to ``out`` (which must not exist,
    or be an empty folder): all or nothing."""
    out = out.absolute()
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise SkillcError(f"{out} exists and is not an empty folder; export writes a new folder",
                          hint="choose a new -o/--output, or remove the old export first", exit_code=1)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise SkillcError(f"cannot write {out}: {exc.strerror or exc}", exit_code=1) from None
    try:
        writer = FolderWriter(stage)
        fill(writer)
        os.chmod(stage, 0o755)
        if out.exists():
            out.rmdir()
        os.rename(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return sorted(writer.written, key=lambda p: p.encode("utf-8", "surrogateescape"))


# ---------------------------------------------------------------- targets

def fill_skills_folder(skills: Sequence[ExportSkill]) -> Callable[[FolderWriter], None]:
    def fill(w: FolderWriter) -> None:
        for skill in skills:
            w.skill(f"skills/{skill.flat_name}", skill)
    return fill


def commit_as_repository(folder: Path, epoch: int) -> str:
    """``git init`` and one commit of everything in ``folder``, with fixed names and dates (the same
    files give the same commit), whatever the user's git configuration; its commit ID."""
    date = f"@{epoch} +0000"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "skillc", "GIT_AUTHOR_EMAIL": "skillc@localhost",
           "GIT_COMMITTER_NAME": "skillc", "GIT_COMMITTER_EMAIL": "skillc@localhost",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "LC_ALL": "C"}
    steps = (["init", "-q", "--template=", "-b", "main"], ["add", "-A"],
             ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "commit", "-q", "-m",
              "Skills exported by skillc"], ["rev-parse", "HEAD"])
    out = ""
    for args in steps:
        try:
            r = subprocess.run(["git", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        except OSError as exc:
            raise SkillcError(f"--git: cannot run git ({exc.strerror or exc})", exit_code=1) from None
        if r.returncode != 0:
            raise SkillcError(f"--git: git {args[0]} failed: {r.stderr.strip()[:300]}", exit_code=1)
        out = r.stdout.strip()
    return out


def committed(fill: Callable[[FolderWriter], None], epoch: int, commits: list[str]) -> Callable[[FolderWriter], None]:
    """``fill``, then the folder committed as a git repository (its commit ID appended to ``commits``)."""
    def run(w: FolderWriter) -> None:
        fill(w)
        commits.append(commit_as_repository(w.root, epoch))
    return run


def _rooted_zip(skill: ExportSkill, epoch: int) -> bytes:
    members = [(path, Path(src).read_bytes(), os.stat(src).st_mode & 0o111 != 0) for path, src in skill.files]
    return skill_zip(members, epoch)


def fill_well_known(skills: Sequence[ExportSkill], epoch: int) -> Callable[[FolderWriter], None]:
    """The discovery tree: the agentskills.io index with each archive beside it
    (``.well-known/agent-skills/<name>.zip``), and the legacy layout."""
    def fill(w: FolderWriter) -> None:
        listed: list[DiscoverySkill] = []
        sources = {}
        for skill in skills:
            data = _rooted_zip(skill, epoch)
            archive = f".well-known/agent-skills/{skill.flat_name}.zip"
            w.write(archive, data)
            files = tuple((p, hashlib.sha256(Path(s).read_bytes()).hexdigest()) for p, s in skill.files)
            listed.append(DiscoverySkill(skill.id, skill.flat_name, skill.description, archive,
                                         hashlib.sha256(data).hexdigest(), files))
            sources[skill.id] = dict(skill.files)
        w.write(INDEX, agent_skills_index(listed, lambda s: s.archive.rsplit("/", 1)[1]))
        w.write(LEGACY_INDEX, legacy_index(listed))
        write_legacy_tree(listed, lambda s, path, dest: w.place(dest, sources[s.id][path]))
    return fill


def _template(name: str):
    import jinja2

    from .resources import template_dir

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir() / "export")),
                             keep_trailing_newline=True, autoescape=False, undefined=jinja2.StrictUndefined)
    return env.get_template(name)


def _json(doc: object) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def plugin_entry(skill: ExportSkill, opts: MarketplaceOptions) -> dict:
    """The plugin's ``plugin.json`` (its marketplace entry adds ``source``)."""
    doc = {"name": skill.flat_name, "version": opts.version,
           "description": skill.description or f"The {skill.flat_name} skill.",
           "author": {"name": opts.owner}}
    if _SPDX.fullmatch(skill.license):
        doc["license"] = skill.license
    return doc


def fill_marketplace(skills: Sequence[ExportSkill], opts: MarketplaceOptions) -> Callable[[FolderWriter], None]:
    def fill(w: FolderWriter) -> None:
        plugins = []
        for skill in skills:
            top = f"plugins/{skill.flat_name}"
            entry = plugin_entry(skill, opts)
            w.write(f"{top}/.claude-plugin/plugin.json", _json(entry))
            w.skill(f"{top}/skills/{skill.flat_name}", skill)
            w.write(f"{top}/README.md", _template("plugin-README.md.j2").render(
                skill=skill, marketplace=opts, files=[p for p, _ in skill.files]).encode("utf-8"))
            own = dict(skill.files)
            licence = next((n for n in _LICENCE_FILES if n in own), None)
            if licence is not None:  # (the skill's own licence text, also at the plugin's root)
                w.place(f"{top}/{licence}", own[licence])
            plugins.append({**entry, "source": f"./{top}"})
        market = {"name": opts.name, "owner": {"name": opts.owner},
                  "metadata": {"description": f"{len(skills)} agent skill(s) exported by skillc, one plugin each.",
                               "version": opts.version},
                  "plugins": plugins}
        w.write(".claude-plugin/marketplace.json", _json(market))
        w.write("README.md", _template("marketplace-README.md.j2").render(
            skills=skills, marketplace=opts).encode("utf-8"))
    return fill


def fill_shared_folder(skills: Sequence[ExportSkill]) -> Callable[[FolderWriter], None]:
    def fill(w: FolderWriter) -> None:
        for skill in skills:
            w.skill(f"Skills/{skill.flat_name}", skill)
        w.write("Skills/skills.md", _template("skills.md.j2").render(
            skills=[(s, [p for p, _ in s.files[1:]]) for s in skills]).encode("utf-8"))
    return fill


__all__ = ["ExportSkill", "FolderWriter", "MarketplaceOptions", "Target", "commit_as_repository", "committed", "export_skill",
           "fill_marketplace", "fill_shared_folder", "fill_skills_folder", "fill_well_known", "shared_names",
           "write_folder"]
