"""``skillc build``: configuration → sources → lint → resolve → emit → manifest → atomic swap.

Guarantees (tested in ``tests/test_build_*.py``):

* **Deterministic**: the same inputs give a byte-identical bundle whatever the directory order, time
  zone or locale; zip times come from ``SOURCE_DATE_EPOCH`` (else 1980-01-01).
* **Atomic**: the bundle is written into a staging folder beside ``--out`` (under
  ``<parent>/.skillc-build/``, a folder discovery skips) and swapped in with one rename
  (``renameat2(RENAME_EXCHANGE)`` where the kernel has it).  A failed or killed build leaves the
  previous bundle as it was; its leftovers are removed by the next build.
* **Locked**: ``<parent>/.skillc-build/<name>.lock`` (``flock``) stops two builds writing one output.
* **Incremental**: the content-addressed cache (``skillc.cache``) skips parsing, linting and
  rendering unchanged skills; the generation a build swaps out is kept as ``<name>.prev`` and
  recycled as the next build's staging folder, so an unchanged file is not even copied.
* **Safe output**: an output folder inside an input repository (unless discovery skips it, like
  ``dist/``), holding an input, or holding something other than a skillc bundle (without
  ``--force``) is refused before anything is written.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import gate, secrets
from ..archive import read_source_date_epoch
from ..cache import (
    BuildCache,
    TableChanges,
    diagnostics_in,
    diagnostics_out,
    key_of,
    own_cache,
    tag_cache_root,
)
from ..config.build import load_build_config
from ..config.files import anchored
from ..discover.walk import SKIP_DIRS, path_key
from ..emit import EMITTERS
from ..emit.manifest import ManifestFile, ManifestPart, manifest_part, read_manifest, write_manifest
from ..emit.precompressed import emit_precompressed, precompressed_folders
from ..emit.skills import bundle_collisions
from ..emit.wellknown import PRETTY_JSON
from ..errors import BuildError, SkillcError
from ..index.emit import CACHE_TABLES as INDEX_TABLES
from ..layout import BUNDLE_TOPS, MANIFEST, WORK_DIR
from ..model import Diagnostic, DiscoveredItem, Document, ItemKind, Severity
from ..parallel import fork_call, fork_map
from ..paths import inside as _inside
from ..resolve.precedence import resolve, winners_of
from ..resolve_types import EmitCollected, EmitContext, EmitOptions, Resolution, SourceSkill
from ..secrets import SECRET_RULE
from ..sources import open_source
from ..sources.git import one_commit_per_checkout
from ..validate.lint import (
    LintConfig,
    active_rules,
    check_collection,
    finalize,
    lint_item,
    lint_manifest_files,
    read_item,
)
from ..validate.rules.loader import load_all as _load_rules
from ..validate.rules.registry import RuleContext
from .early import HeadStart, head_start
from .options import BuildOptions, cache_root, job_count, output_folder
from .output import OutputLock, clean_stale, staged_bundle

if TYPE_CHECKING:
    from ..emit.staging import Staging

# The stage diagnostic the build raises itself, through its declared rule (code and severity).
_R110 = _load_rules()["R110"]


@dataclass
class BuildResult:
    out: Path
    resolution: Resolution
    diagnostics: list[tuple[str, Diagnostic]]  # (repository, diagnostic), lint + resolution
    stats: dict[str, int]
    files: int
    bytes: int
    seconds: float
    excluded: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage (benchmarks; not in --json)
    notes: list[str] = field(default_factory=list)  # warnings about the build itself (the cache), printed
    excluded_from: dict[str, str] = field(default_factory=dict)  # excluded ID -> the repository whose copy failed

    def summary(self) -> dict[str, object]:
        errors = sum(1 for _, d in self.diagnostics if d.severity is Severity.ERROR)
        warnings = sum(1 for _, d in self.diagnostics if d.severity is Severity.WARNING)
        return {
            "out": str(self.out),
            "skills": len(self.resolution.skills),
            "collections": len(self.resolution.collections),
            "shadowed": len(self.resolution.shadowed),
            "excluded": [_redact(i) for i in sorted(self.excluded, key=path_key)],
            "excluded_reasons": {_redact(i): _redact(why) for i, why in self.excluded.items()},  # (as "failed")
            "excluded_from": {_redact(i): repo for i, repo in self.excluded_from.items()},  # (whose copy failed)
            "errors": errors,
            "warnings": warnings,
            "files": self.files,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            **self.stats,
        }


Progress = Callable[[str, int], Callable[[int], None] | None]  # (label, total) -> advance(n)




# --- output folder checks ------------------------------------------------------------------------

def check_output(out: Path, repo_paths: Sequence[tuple[str, Path]], force: bool,
                 keep: Sequence[tuple[str, Path]] = (), written: str | None = None) -> Mapping | None:
    """Refuse an output folder that would read or destroy an input, or hold a stranger's files.
    ``keep``: folders never replaced, ``--force`` or not (the home folder, the current folder):
    an output holding one of them is refused.  Returns the manifest of the bundle already there
    (None when there is none); ``written``: the SHA-256 of the manifest the last build wrote there
    (``read_manifest``)."""
    real_out = os.path.realpath(out)
    if out.exists() and not out.is_dir():
        raise BuildError(f"output {out} exists and is not a folder", hint="choose another --out")
    for name, repo in repo_paths:
        real_repo = os.path.realpath(repo)
        if _inside(real_repo, real_out):
            raise BuildError(f"output folder {out} contains input repository {name!r} ({repo}); "
                             "building would replace it", hint="choose an --out outside the repository")
        if _inside(real_out, real_repo):
            rel = Path(os.path.relpath(real_out, real_repo)).parts
            if not any(part in SKIP_DIRS for part in rel):
                raise BuildError(
                    f"output folder {out} is inside input repository {name!r} ({repo}): the next build "
                    "would read the bundle as skills",
                    hint=f"choose an --out outside it, or a folder discovery skips ({', '.join(sorted(SKIP_DIRS))})")
    for what, folder in keep:
        # (`--out ~` typed for a fake HOME, `--out .`, `--out /`: a swap would delete the folder whole,
        # and --force only vouches that the output holds nothing the user wants)
        if _inside(os.path.realpath(folder), real_out):
            held = "is" if os.path.realpath(folder) == real_out else "holds"
            raise BuildError(f"output folder {out} {held} {what} ({folder}); a build replaces its output "
                             "whole, so it never writes there, --force or not",
                             hint="choose an --out of its own, e.g. dist")
    if not out.is_dir():
        return None

    manifest = read_manifest(out, written)
    if manifest is None and not force and any(True for _ in os.scandir(out)):
        raise BuildError(f"output folder {out} is not empty and holds no skillc bundle (no api/manifest.json); "
                         "refusing to replace it", hint="use --force to replace it, or choose another --out")
    return manifest


def check_cache(cache_root: Path, repo_paths: Sequence[tuple[str, Path]]) -> None:
    """Refuse a cache folder that holds an input repository (``SKILLC_CACHE_DIR`` set to the skills
    folder): its ``CACHEDIR.TAG`` would make every later walk of the repository skip the skills."""
    real_cache = os.path.realpath(cache_root)
    for name, repo in repo_paths:
        real_repo = os.path.realpath(repo)
        if _inside(real_repo, real_cache):
            raise BuildError(f"cache folder {cache_root} holds input repository {name!r} ({repo}); "
                             "the cache is tagged as one (CACHEDIR.TAG), and lint and build skip such folders",
                             hint="point SKILLC_CACHE_DIR at a folder of its own, e.g. .skillc-cache")
        if _inside(real_cache, real_repo) and not own_cache(cache_root):
            raise BuildError(f"cache folder {cache_root} is inside input repository {name!r} ({repo}) and holds "
                             "other files, so it cannot be tagged as a cache: the next build would read it as skills",
                             hint="point SKILLC_CACHE_DIR at a new folder of its own, e.g. .skillc-cache")


def _build_busy(holder: str, lock: Path) -> BuildError:
    return BuildError(f"another skillc build (pid {holder}) is writing this output; lock {lock}",
                      hint="wait for it to finish; the lock is released when that process exits")


# --- lint ----------------------------------------------------------------------------------------

class Reader:
    """The ``read`` callback sources call: cached parse, and where each document came from.

    A source that passes the file's ``stat`` (``st=``) lets the cache skip reading an unchanged
    file; ``file_digest(path, stat)`` hashes supporting files through the same stat cache."""
    def __init__(self, cache: BuildCache, progress: Progress | None = None) -> None:
        self.cache = cache
        self.origin: dict[int, tuple[str, DiscoveredItem]] = {}
        self.file_digest = cache.file_digest
        self.progress = progress  # (label, total) -> advance: sources report the skills they read

    def __call__(self, root: str, item: DiscoveredItem, st: os.stat_result | None = None) -> Document:
        skill = item.skill_dir if item.kind is ItemKind.SKILL else item.path
        try:
            doc = self.cache.read_document(root, item.path, item.kind, skill, st)
        except OSError:
            doc = read_item(root, item)  # the D105 diagnostic
        self.origin[id(doc)] = (root, item)
        return doc


def lint_skills(skills: Sequence[SourceSkill], reader: Reader, config: LintConfig, cache: BuildCache,
                jobs: int = 1, progress: Progress | None = None,
                blocked: dict[int, str] | None = None) -> dict[int, list[Diagnostic]]:
    """Document rules per skill (cached by the skill's files and the lint configuration), then the
    collection rules over all of them.  Keyed by ``id(skill)``.

    ``blocked`` receives why a skill must not be published whatever the configuration selects: a
    likely secret in its SKILL.md that B707 was not there to report (a profile or selection without
    it, `secret-scan = false`, an ignore); supporting files with one are withheld at emit instead."""
    rules = active_rules(config)
    blocked = {} if blocked is None else blocked
    work = _lint_work(_located(skills, reader), config, cache, blocked)
    _check_documents(work, rules, config, cache, jobs, progress, blocked)
    _check_collections(work, rules)
    return work.out


@dataclass
class _LintWork:
    """What ``lint_skills`` works through: every skill's rule context, the ones the cache does not
    answer, each repository root's configuration, and the findings so far (``out``)."""
    contexts: list[tuple[str, SourceSkill, RuleContext]] = field(default_factory=list)  # (root, skill, context)
    todo: list[tuple[SourceSkill, RuleContext, str]] = field(default_factory=list)  # (skill, context, cache key)
    # Per repository root: the configuration (a local repository's paths are matched by its globs
    # from the configuration file's folder, as `skillc lint` does) and its hash, computed once.
    configs: dict[str, tuple[LintConfig, str]] = field(default_factory=dict)
    config_at: dict[Path, LintConfig] = field(default_factory=dict)  # the same, by the contexts' root
    out: dict[int, list[Diagnostic]] = field(default_factory=dict)


def _located(skills: Sequence[SourceSkill], reader: Reader) -> list[tuple[SourceSkill, str, DiscoveredItem, Document]]:
    """Each skill with the repository root and discovered item it was read from."""
    located = []
    for skill in skills:
        origin = reader.origin.get(id(skill.document))
        doc = skill.document
        if origin is None:  # a source that parsed by itself (http): lint it from where it is
            src = Path(skill.files[0].source_path)
            root = str(src.parent)
            item = DiscoveredItem(ItemKind.SKILL, src.name, "", src.name)
            doc = replace(doc, path=src.name)
        else:
            root, item = origin
        located.append((skill, root, item, doc))
    return located


def _lint_work(located, config: LintConfig, cache: BuildCache, blocked: dict[int, str]) -> _LintWork:
    """Every skill's rule context; the findings the cache holds, and the skills left to check."""
    work = _LintWork()
    roots: dict[str, Path] = {}  # one Path per repository root, not one per skill
    skill_dirs: dict[str, list[str]] = {}  # root -> the skill folders in it (for nested skills), sorted
    for _, root, item, _ in located:
        skill_dirs.setdefault(root, []).append(item.skill_dir)
    for dirs in skill_dirs.values():
        dirs.sort()
    for skill, root, item, doc in located:
        root_path = roots.get(root) or roots.setdefault(root, Path(root))  # (setdefault alone makes the Path each time)
        # A skill at the repository's root is checked (S308) against the name it is published under,
        # which its files do not show, not its folder's: a zip's extraction folder is named after the
        # archive's hash, a git checkout after its URL and ref, an http mirror after the ID.
        root_name = "" if item.skill_dir else skill.id.rsplit("/", 1)[-1]
        work.contexts.append((root, skill, RuleContext(item, doc, root_path, config.settings, config.profile,
                                                       root_name)))
        if root not in work.configs:
            cfg = _repository_config(config, skill.repository, root)
            work.configs[root] = (cfg, key_of("lint-config", repr(canonical(lint_identity(cfg)))))
        root_config, config_key = work.configs[root]
        work.config_at[root_path] = root_config
        # The rules see the skill's files as the build publishes them, so what they read is what the
        # cache key covers (a *.pyc, an empty folder or a dangling link is never published, and never
        # decides a build): the files with their hashes, and the folders of nested skills.
        nested = _nested_dirs(skill_dirs[root], item.skill_dir)
        key = key_of("lint", config_key, item.path, tuple((f.path, f.sha256) for f in skill.files), nested,
                     root_name)
        rec = cache.get("lint", key)
        if rec is not None:
            cache.stats.lint_cached += 1
            work.out[id(skill)] = list(diagnostics_in(rec[0]))
            if rec[1]:
                blocked[id(skill)] = rec[1]
        else:
            published = DiscoveredItem(item.kind, item.path, item.skill_dir, item.file_name, item.aliases,
                                       _published_listing(skill, nested))
            work.todo.append((skill, RuleContext(published, doc, root_path, config.settings, config.profile,
                                                 root_name), key))
    return work


def _repository_config(config: LintConfig, repository, root: str) -> LintConfig:
    """The lint configuration of one repository root: a local repository's paths are matched by its
    globs from the configuration file's folder, as `skillc lint` does."""
    return anchored(config, root) if repository.type == "filesystem" else config


def lint_listed_manifests(listings, reader: Reader, per_skill: Mapping[int, list[Diagnostic]],
                          config: LintConfig) -> list[tuple[str, Diagnostic]]:
    """The manifest stage (G1xx) over each repository's plugin and marketplace manifests, as
    `skillc lint` runs it on the folder: (repository, diagnostic), each finalized by its repository's
    configuration."""
    rules = active_rules(config)
    out: list[tuple[str, Diagnostic]] = []
    for listing in listings:
        if not listing.manifests or listing.repository is None:
            continue
        skills = []
        for skill in listing.skills:
            origin = reader.origin.get(id(skill.document))
            if origin is not None and origin[0] == listing.root and origin[1].kind is ItemKind.SKILL:
                skills.append((origin[1].skill_dir, per_skill.get(id(skill), ())))
        cfg = _repository_config(config, listing.repository, listing.root)
        found = lint_manifest_files(listing.root, listing.manifests, skills, rules)
        out.extend((listing.input.repository, d) for d in finalize(found, cfg))
    return out


def _check_documents(work: _LintWork, rules, config: LintConfig, cache: BuildCache, jobs: int,
                     progress: Progress | None, blocked: dict[int, str]) -> None:
    """The document rules over the skills the cache did not answer, in forked workers; each result
    goes into the cache."""
    b707 = config.settings.secret_scan and any(r.code == SECRET_RULE for r in rules)

    def check(entry: tuple[SourceSkill, RuleContext, str]) -> tuple[list[Diagnostic], str]:
        _, ctx, _ = entry
        cfg = work.config_at[ctx.root]
        diags = finalize(lint_item(ctx, rules), cfg)  # (the item linted as `skillc lint` lints it)
        unpublishable = ""
        if not b707 or cfg.ignored_at(SECRET_RULE, ctx.item.path):
            found = secrets.scan(ctx.document.text)
            if found:
                unpublishable = (f"{ctx.item.file_name} holds a likely secret ({found[0].kind}) at line "
                                 f"{found[0].line}; never published")
        return diags, unpublishable or gate.decoding_leak(ctx.document)

    advance = progress("Linting skills", len(work.todo)) if progress is not None else None
    for (skill, _, key), (diags, unpublishable) in zip(work.todo, fork_map(check, work.todo, jobs, advance)):
        cache.stats.linted += 1
        cache.put("lint", key, (diagnostics_out(diags), unpublishable))
        work.out[id(skill)] = diags
        if unpublishable:
            blocked[id(skill)] = unpublishable


def _check_collections(work: _LintWork, rules) -> None:
    """Collection rules (duplicate names, description budget…) run per repository, like `skillc lint`
    (two repositories reading one folder, with other globs or tiers, are two groups)."""
    groups: dict[tuple[str, str], list[tuple[SourceSkill, RuleContext]]] = {}
    for root, skill, ctx in work.contexts:
        groups.setdefault((skill.repository.name, root), []).append((skill, ctx))
    for (_, root), group in groups.items():
        by_path = {ctx.item.path: skill for skill, ctx in group}
        for d in finalize(check_collection([c for _, c in group], rules), work.configs[root][0]):
            skill = by_path.get(d.path)
            if skill is not None:
                work.out.setdefault(id(skill), []).append(d)


def _nested_dirs(sorted_dirs: list[str], skill_dir: str) -> tuple[str, ...]:
    """The folders of the skills below ``skill_dir`` (relative to it), from every skill folder of its
    repository, sorted."""
    prefix = f"{skill_dir}/" if skill_dir else ""
    i = bisect.bisect_left(sorted_dirs, prefix)
    if prefix and (i == len(sorted_dirs) or not sorted_dirs[i].startswith(prefix)):
        return ()  # (the usual case: no skill inside this one)
    out = []
    for d in sorted_dirs[bisect.bisect_left(sorted_dirs, prefix):]:  # (those starting with it sort together)
        if not d.startswith(prefix):
            break
        if d != skill_dir:
            out.append(d[len(prefix):])
    return tuple(out)


def _published_listing(skill: SourceSkill, nested: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``DiscoveredItem.listing`` (files, folders, links) of what the build publishes of ``skill``:
    SKILL.md and its supporting files, their folders, and the folders of nested skills."""
    files = [f.path for f in skill.files]
    dirs: set[str] = set()
    # (a nested skill's folder is listed, not entered, as discovery lists it: the ones inside it are its own)
    outer = [n for i, n in enumerate(nested) if not any(n.startswith(m + "/") for m in nested[:i])]
    for path in [*files[1:], *(f"{n}/x" for n in outer)]:
        d = path.rpartition("/")[0]
        while d and d not in dirs:
            dirs.add(d)
            d = d.rpartition("/")[0]
    return tuple(sorted(files, key=path_key)), tuple(sorted(dirs, key=path_key)), ()


# --- the build -----------------------------------------------------------------------------------


def lint_identity(config: LintConfig) -> LintConfig:
    """What of a lint configuration decides the results: not the path of the file it came from (a
    checkout moved to another folder builds the same bundle, and reuses its cache)."""
    return replace(config, source=None)


def canonical(obj: object) -> object:
    """A repr-stable form (sets sorted, dataclasses as tuples) so hashes agree across processes."""
    import dataclasses
    import enum

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__, tuple((f.name, canonical(getattr(obj, f.name))) for f in dataclasses.fields(obj)))
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (set, frozenset)):
        return tuple(sorted((canonical(v) for v in obj), key=repr))
    if isinstance(obj, Mapping):
        return tuple(sorted(((repr(k), canonical(v)) for k, v in obj.items())))
    if isinstance(obj, (list, tuple)):
        return tuple(canonical(v) for v in obj)
    return obj


def _config_hash(cfg: object, extra: object) -> str:
    return hashlib.sha256(repr(canonical((cfg, extra))).encode("utf-8", "surrogateescape")).hexdigest()


def run_build(opts: BuildOptions, progress: Progress | None = None, start: HeadStart | None = None) -> BuildResult:
    """Build the bundle (see the module docstring).  ``start``: what the caller started before it
    imported this module (``early.head_start``, as ``skillc build`` does); started now otherwise.
    The cyclic garbage collector is paused meanwhile: a build holds millions of small acyclic
    objects (cache records, documents), which its full collections would traverse again and again
    (a third of a 10,000-skill rebuild); reference counting still frees them."""
    if start is None:
        with head_start(opts) as start:
            return run_build(opts, progress, start)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            return _run_build(opts, progress, start)
        except (SkillcError, OSError):
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised below unless the cache was to blame
            if not opts.use_cache:
                raise
            # A cache record of the wrong shape (edited by hand, or left by a broken build) must not
            # break every later build: build again reading nothing from the cache, and replace it.
            note = f"the build cache was unusable ({type(exc).__name__}: {exc}); built without it and replaced it"
            result = _run_build(opts, progress, HeadStart(), fresh_cache=True)  # (the first try's were used)
            result.notes.insert(0, note)
            return result
    finally:
        if was_enabled:
            gc.enable()


def _run_build(opts: BuildOptions, progress: Progress | None, start: HeadStart,
               fresh_cache: bool = False) -> BuildResult:
    """One call per stage: plan (configuration, output, cache) → sources (discover and parse) →
    validate (lint) → resolve → the publishing gate → emit into staging and swap in.  ``start``:
    the site's mkdocs child (``early.head_start``)."""
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    lap = _Lap(timings)
    plan = _plan(opts, fresh_cache)
    lap("config+cache load")
    work, name = plan.out.parent / WORK_DIR, plan.out.name
    with OutputLock(work / f"{name}.lock", _build_busy), _sources_folder(plan.cache_root, opts.env) as source_cache:
        clean_stale(work, name)
        reader = Reader(plan.cache, progress)
        listings = _read_sources(plan.cfg, source_cache, reader)
        lap("sources")
        checked = _validate(listings, reader, plan, progress)
        lap("lint")
        resolution = _resolve(listings, checked, plan, opts.keep_going)
        lap("resolve")
        # (the publishing gate: published text redacted strictly, the audit for the manifest)
        resolution, redactions = gate.gate_resolution(resolution, source_cache / "redacted", plan.cache)
        plan = replace(plan, mkdocs=start.mkdocs)
        manifest, collected = _emit(resolution, tuple(redactions), checked, plan, opts, work, progress, lap)
        plan.cache.save()  # (after the swap: a cache that cannot be written never fails a published build)
        lap("cache save")
    return _result(plan, resolution, checked, manifest, collected, time.perf_counter() - t0, timings)


@dataclass(frozen=True)
class _Plan:
    """What the build decides before reading any skill: its configuration, where the bundle goes,
    the cache and the hashes that key it."""
    cfg: Any  # config.build.BuildConfig
    out: Path  # the bundle folder, absolute (a symlinked one: the folder it points to)
    current_manifest: Mapping | None  # the bundle there now (None: none, or not a skillc bundle)
    cache_root: Path | None
    cache: BuildCache
    config_hash: str  # the manifest's: what was asked
    records_hash: str  # the cache records': not whether the site or whoosh is emitted
    epoch: int | None  # SOURCE_DATE_EPOCH
    as_of: float  # build time
    jobs: int
    mkdocs: Any = None  # the docs site's mkdocs child, started early (early.head_start)


@dataclass(frozen=True)
class _Checked:
    """The validate stage's verdicts, per skill (keyed by ``id(skill)``) and per published ID."""
    all_skills: tuple[SourceSkill, ...]
    per_skill: Mapping[int, list[Diagnostic]]
    diagnostics: list[tuple[str, Diagnostic]]  # (repository, diagnostic): grows through resolve and emit
    failing: dict[str, str]  # ID -> why it is not published: grows through resolve
    winning: Mapping[str, SourceSkill]  # ID -> the copy that would be published
    # "<repository>: <manifest path> (codes)" for each plugin or marketplace manifest with an error:
    # they fail the build as a skill's lint errors do (no skill to leave out: --keep-going reports them)
    failing_manifests: tuple[str, ...] = ()


def _plan(opts: BuildOptions, fresh_cache: bool) -> _Plan:
    epoch = read_source_date_epoch(opts.env)
    cfg = load_build_config(opts.paths, opts.config, cwd=opts.cwd, home=opts.home, env=opts.env)
    out = output_folder(opts)
    local = [(r.name, (Path(r.location) if Path(r.location).is_absolute() else opts.cwd / r.location))
             for r in cfg.repositories if r.type in ("filesystem", "embedded")]
    root = cache_root(opts)
    inputs = (cfg.settings(), lint_identity(cfg.lint),
              tuple((r.name, r.type, r.tier, r.priority, r.order) for r in cfg.repositories))
    config_hash = _config_hash(inputs, (opts.site, opts.emit))
    # What the cached records depend on: not whether the site or whoosh is emitted (a cache shared by
    # `--no-site` pull-request builds and site builds on main was discarded at every switch).
    records_hash = _config_hash(inputs, ())
    # (loaded first, reading only: it knows the manifest the last build wrote to this output)
    cache = BuildCache(root / "records" if root else None, salt=records_hash, fresh=fresh_cache)
    current_manifest = check_output(out, local, opts.force,
                                    keep=(("your home folder", opts.home), ("the current folder", opts.cwd)),
                                    written=cache.get(WRITTEN_TABLE, _written_key(out)))
    if root is not None:
        check_cache(Path(root), local)
        tag_cache_root(root)
    return _Plan(cfg, out, current_manifest, root, cache, config_hash, records_hash, epoch,
                 float(epoch) if epoch is not None else time.time(), job_count(opts))


WRITTEN_TABLE = "manifest"  # output folder -> the SHA-256 of the manifest the last build swapped in there


def _written_key(out: Path) -> str:
    return key_of("written", os.fspath(out))


def _read_sources(cfg, source_cache: Path, reader: Reader) -> list:
    """Discover and parse every repository (parsing through the cache): one listing each."""
    with one_commit_per_checkout(cfg.repositories, source_cache):  # (one url and branch: one commit)
        return [open_source(repo, cache_dir=source_cache, lint=cfg.lint).skills(reader) for repo in cfg.repositories]


def _validate(listings, reader: Reader, plan: _Plan, progress: Progress | None) -> _Checked:
    """Lint every offered skill; the IDs whose published copy fails (errors, or a secret lint did not
    report) go into ``failing``."""
    all_skills = tuple(s for lst in listings for s in lst.skills)
    blocked: dict[int, str] = {}
    per_skill = lint_skills(all_skills, reader, plan.cfg.lint, plan.cache, plan.jobs, progress, blocked)
    diagnostics: list[tuple[str, Diagnostic]] = []
    for lst in listings:  # (the listings' own diagnostics come back through resolve)
        repo_name = lst.input.repository
        for s in lst.skills:
            diagnostics.extend((repo_name, d) for d in per_skill.get(id(s), ()))
    failing: dict[str, str] = {}
    # Only the copy that would be published can fail the build: a broken copy that a valid one of
    # higher precedence shadows is reported, and the valid one is published (overriding a broken
    # upstream skill is what precedence is for).
    winning = winners_of(listings)
    publish = {id(s) for s in winning.values()}
    for s in all_skills:
        if id(s) not in publish:
            continue
        errs = [d for d in per_skill.get(id(s), ()) if d.severity is Severity.ERROR]
        if errs:
            failing.setdefault(s.id, "lint errors: " + ", ".join(sorted({d.code for d in errs})))
        elif id(s) in blocked:
            failing.setdefault(s.id, blocked[id(s)])
    manifest_diagnostics = lint_listed_manifests(listings, reader, per_skill, plan.cfg.lint)
    diagnostics.extend(manifest_diagnostics)
    return _Checked(all_skills, per_skill, diagnostics, failing, winning, _failing_manifests(manifest_diagnostics))


def _failing_manifests(found: Sequence[tuple[str, Diagnostic]]) -> tuple[str, ...]:
    codes: dict[tuple[str, str], set[str]] = {}
    for repo, d in found:
        if d.severity is Severity.ERROR:
            codes.setdefault((repo, d.path), set()).add(d.code)
    return tuple(f"{repo}: {path} ({', '.join(sorted(c))})" for (repo, path), c in sorted(codes.items()))


def _resolve(listings, checked: _Checked, plan: _Plan, keep_going: bool) -> Resolution:
    """Resolve (R1xx: shadowing, unsafe or colliding IDs) without the failing skills; the IDs that
    cannot be published fail too, and resolve runs again without them.  Without ``keep_going`` any
    failure is a ``BuildError``."""
    settings = plan.cfg.settings()
    diagnostics, failing = checked.diagnostics, checked.failing
    resolution = resolve(_without(listings, failing), settings=settings)
    res_errors = _resolution_errors(listings, resolution, checked, plan.cfg.lint)
    if res_errors:
        failing.update(res_errors)
        resolution = resolve(_without(listings, failing), settings=settings)
    if (failing or checked.failing_manifests) and not keep_going:
        raise BuildError(_failure_message(failing, checked.failing_manifests), hint="fix them, or pass --keep-going to "
                         "publish the valid skills and list the others in the manifest",
                         diagnostics=tuple((r, _redacted(d)) for r, d in diagnostics
                                           if d.severity is Severity.ERROR),
                         failed={_redact(k): _redact(failing[k]) for k in sorted(failing, key=path_key)})
    resolution = replace(resolution, excluded=tuple(sorted(failing, key=path_key)))
    if failing:  # (--keep-going) an excluded ID's shadowing is recorded all the same
        resolution = _with_excluded_shadowing(resolution, listings, failing, settings, diagnostics)
    return resolution


def _resolution_errors(listings, resolution: Resolution, checked: _Checked, lint: LintConfig) -> dict[str, str]:
    """Why each resolved ID cannot be published (resolve's errors, a secret in the ID, a bundle path
    collision); the diagnostics go into ``checked.diagnostics``."""
    res_errors: dict[str, str] = {}
    repository_of = _repository_lookup(listings, resolution)
    said = _said_by_lint(resolution, checked.per_skill)
    for d in finalize(resolution.diagnostics, lint):
        if said(d):
            continue
        checked.diagnostics.append((repository_of(d), d))
        if d.severity is Severity.ERROR and d.skill:
            res_errors.setdefault(d.skill, f"{d.code}: {d.message}")
    # A secret in an ID would be in every URL and list of the bundle: never published, whatever
    # the lint configuration selects (B707 reports it in lint).
    for s in resolution.skills:
        found = secrets.scan(s.id)
        if found:
            res_errors.setdefault(s.id, f"its ID holds a likely secret ({found[0].kind}); rename the folder")
    _bundle_collisions(resolution, checked.diagnostics, res_errors)
    return res_errors


def _bundle_collisions(resolution: Resolution, diagnostics: list[tuple[str, Diagnostic]],
                       res_errors: dict[str, str]) -> None:
    """Two skills that would write the same bundle path (from different repositories): one would
    silently overwrite the other's file, so neither is published, whatever lint selects (R110)."""
    by_id = {s.id: s for s in resolution.skills}
    for skill_id, other, path in bundle_collisions(resolution.skills):
        skill = by_id[skill_id]
        whose = f"skill {other!r}" if other else "the bundle's own file"
        message = f"skill {skill_id!r} would write {path}, where {whose} is; rename a folder"
        diagnostics.append((skill.repository.name, Diagnostic(
            _R110.code, _R110.severity, skill.document.path, 0, 0, message, skill_id)))
        res_errors.setdefault(skill_id, f"{_R110.code}: {message}")
        if other:  # (both are left out: each gets its line)
            message = f"skill {other!r} would have {path} overwritten by skill {skill_id!r}; rename a folder"
            diagnostics.append((by_id[other].repository.name, Diagnostic(
                _R110.code, _R110.severity, by_id[other].document.path, 0, 0, message, other)))
            res_errors.setdefault(other, f"{_R110.code}: {message}")


def _emit(resolution: Resolution, redactions: tuple, checked: _Checked, plan: _Plan, opts: BuildOptions,
          work: Path, progress: Progress | None, lap: _Lap) -> tuple[ManifestFile, EmitCollected]:
    """Emit into a staging folder, write the manifest, check every byte, and swap it in; a failure
    removes the staging folder and leaves the bundle as it was.  Published files get the modes of a
    022 umask whatever the user's (0600 files under umask 077 could not be served by a web server
    running as another user; 0664 under 002 would make one bundle's modes depend on who built it)."""
    user_umask = os.umask(0o022)
    collected = EmitCollected()
    forked: list[Forked] = []  # the emitters running in a forked process (the docs site)
    # (--force over a folder that held no bundle: what it held is not kept as the previous generation)
    keep_previous = not (plan.out.is_dir() and opts.force and plan.current_manifest is None)
    try:
        with staged_bundle(work, plan.out, plan.current_manifest, keep_previous) as staged:
            lap("staging")
            try:
                options = _emit_options(resolution, redactions, checked, plan, opts, staged.staging)
                ctx = EmitContext(resolution, staged.path, plan.as_of, tuple(Path(p) for p in opts.memory),
                                  plan.cache_root / "emit" if plan.cache_root else None, options, collected)
                early = _run_emitters(ctx, progress, lap, forked)
                checked.diagnostics.extend(collected.diagnostics)
                manifest = write_manifest(ctx, early.part)
                lap("manifest")
                _gate_after_join(staged.path, manifest, early, plan.cache)
                plan.cache.put(WRITTEN_TABLE, _written_key(plan.out), manifest.sha256)  # (saved only once swapped in)
                lap("gate")
            except BaseException:
                pending = collected.artifacts
                if hasattr(pending, "cancel"):
                    pending.cancel()  # type: ignore[union-attr]
                for running in forked:  # (the forked site: killed before the staging folder goes)
                    running.cancel()
                raise
        lap("swap")
    finally:
        os.umask(user_umask)  # (the user's again: the cache keeps what their umask gives)
    return manifest, collected


def _emit_options(resolution: Resolution, redactions: tuple, checked: _Checked, plan: _Plan, opts: BuildOptions,
                  staging: Staging) -> EmitOptions:
    return EmitOptions(
        site=opts.site, emit=tuple(opts.emit), epoch=plan.epoch or 0, source_date_epoch=plan.epoch,
        config_hash=plan.config_hash, records_hash=plan.records_hash, cwd=str(opts.cwd), cache=plan.cache,
        config_files=_shown_config_files(plan.cfg.config_files, opts.cwd), staging=staging,
        lint_summary=_lint_summary(plan.cfg.lint, len(checked.all_skills), checked.diagnostics),
        excluded_reasons=checked.failing, jobs=plan.jobs, keep_going=opts.keep_going,
        external=plan.cfg.external,  # Plan Cascade detection rules, for api/index/select.json
        redactions=redactions, mkdocs=plan.mkdocs)


def _run_emitters(ctx: EmitContext, progress: Progress | None, lap: _Lap, forked: list[Forked]) -> _Early:
    """Each emitter in turn (``_emit_order``); the search index first in a forked process where this
    process may fork (``FORKED_FIRST``), the docs site in one beside the emitters after it (``forked``:
    both joined before the emitter that reads their files).  What needs none of the site's files is
    done before its join, forked or not (``_before_join``)."""
    early = _Early()
    index = forked[-1:] if _fork_emitter(dict(EMITTERS)[FORKED_FIRST], ctx, forked, tables=INDEX_TABLES) else []
    if index:
        lap(f"emit {FORKED_FIRST} (forked)")
    for emitter_name, fn in sorted(EMITTERS, key=_emit_order):
        if emitter_name == FORKED_FIRST and index:  # (its turn: the skills' files are written by now)
            _wait_artifacts(ctx.collected)
            lap("emit skills")
            continue
        if emitter_name == JOIN_BEFORE:
            _join_forked(ctx, forked, index)
            lap(f"emit {FORKED_FIRST} (waited for)")
            early = _before_join(ctx, lap)
            _join_forked(ctx, forked)
            lap(f"emit {FORKED} (waited for)")
            emit_precompressed(ctx, precompressed_folders(BUNDLE_TOPS, inside=False))  # (the site's assets)
            lap(f"emit {JOIN_BEFORE}")
            continue
        if emitter_name == FORKED and ctx.options.site and _fork_emitter(fn, ctx, forked, mkdocs=ctx.options.mkdocs):
            lap(f"emit {FORKED} (forked)")
            continue
        advance = None
        if emitter_name == "skills" and progress is not None:
            advance = progress("Publishing skills", len(ctx.resolution.skills))
        fn(replace(ctx, options=replace(ctx.options, progress=advance)) if advance is not None else ctx)
        lap(f"emit {emitter_name}")
        if emitter_name == OVERLAPPED:  # now wait for the skills' files
            _wait_artifacts(ctx.collected)
            lap("emit skills")
    _join_forked(ctx, forked)
    return early


@dataclass(frozen=True)
class _Early:
    """What ``_before_join`` did: the manifest but the site's rows, the ``(path, sha256)`` of its rows
    the publishing gate did not pass (none unless a file could not be read), and the digests of the
    pieces of the manifest's text it passed (None and none: all of it is done after the emitters)."""
    part: ManifestPart | None = None
    unpassed: tuple[tuple[str, str], ...] = ()
    pieces: frozenset[str] = frozenset()


def _before_join(ctx: EmitContext, lap: _Lap) -> _Early:
    """Below the other emitters' top-level names (``BUNDLE_TOPS``, which the docs site never writes),
    while the forked site is built: the index's precompressed copies, the manifest's rows and the
    rest of its document, the recycled skills' files nobody produced removed (the skills' files
    are those the manifest lists), and the publishing gate over those rows.  After the join only
    the site's files are listed, compressed and gated."""
    _wait_artifacts(ctx.collected)
    emit_precompressed(ctx, precompressed_folders(BUNDLE_TOPS, inside=True))
    lap(f"{JOIN_BEFORE} (beside the site)")
    part = manifest_part(ctx, BUNDLE_TOPS)
    if ctx.options.staging is not None:  # (the part lists the skills' files from their records, walking none
        # of their folders: what the recycled generation holds there and no skill produced can go now)
        ctx.options.staging.prune(part.per_skill.keys() | part.known.keys())
    lap("manifest (beside the site)")
    known = ctx.collected.known
    unpassed = gate.unchecked_files(ctx.out, part.pairs, ctx.options.cache,
                                    [(rel, known[rel][0]) for rel in PRETTY_JSON if rel in known])
    pieces = gate.check_pieces(MANIFEST, part.pieces, ctx.options.cache)  # (its head and these rows)
    lap("gate (beside the site)")
    return _Early(part, tuple(unpassed), pieces)


def _gate_after_join(out: Path, written: ManifestFile, early: _Early, cache: BuildCache) -> None:
    """The publishing gate over what ``_before_join`` did not pass: the site's files, and the pieces
    of the manifest's text it has not seen (the site's rows, the blocks around them): with those
    checked beside the site, every output byte is checked, as a client reads it (without a part,
    ``written.added`` is every row)."""
    gate.check_files(out, [*early.unpassed, *written.added], cache)
    gate.check_pieces(MANIFEST, written.pieces, cache, early.pieces)


if TYPE_CHECKING:  # (here, not with the imports above: the stages' owner keeps those lazy)
    from ..parallel import Forked


@dataclass(frozen=True)
class _ForkedEmit:
    """What an emitter run in a forked process handed back (its ``EmitCollected`` but the artifacts,
    which it only reads) and the staging counters it moved; pickled to the build process."""
    diagnostics: list[tuple[str, Diagnostic]]
    notes: list[str]
    digests: dict[str, tuple[int, int, int, str]]
    known: dict[str, tuple[str, int]]
    listed: set[str]
    counters: tuple[int, int, int]  # Staging (kept, linked, written) added
    cache: tuple[TableChanges, ...] = ()  # what it did with the build cache's tables it owns


def _fork_emitter(fn: Callable[[EmitContext], None], ctx: EmitContext, forked: list[Forked],
                  tables: tuple[str, ...] = (), mkdocs: Any = None) -> bool:
    """Start ``fn(ctx)`` in a forked process (appended to ``forked``); False where it must run here
    (``parallel.can_fork``).  The process writes only its own trees of the staging folder and its
    own state under the cache folder; what it adds to ``ctx.collected`` and does with the build
    cache's ``tables`` (which no other emitter uses) comes back at the join.  ``mkdocs``: the build's
    mkdocs child, which the forked process uses (``early.head_start``)."""
    staging = ctx.options.staging
    cache = ctx.options.cache

    def run() -> _ForkedEmit:
        before = _counters(staging)
        mine = EmitCollected(artifacts=ctx.collected.artifacts)  # (waited for: a plain mapping now)
        fn(replace(ctx, collected=mine))
        after = _counters(staging)
        return _ForkedEmit(mine.diagnostics, mine.notes, mine.digests, mine.known, mine.listed,
                           tuple(a - b for a, b in zip(after, before)),  # type: ignore[arg-type]
                           cache.changes(tables) if cache is not None else ())

    def start() -> Forked | None:
        return fork_call(run, ctx.options.jobs)

    # (mkdocs: started by this process, the forked one learns its end through relay)
    running = mkdocs.relay(start) if mkdocs is not None else start()
    if running is None:
        return False
    forked.append(running)
    return True


def _join_forked(ctx: EmitContext, forked: list[Forked], which: Sequence[Forked] | None = None) -> None:
    """Wait for the forked emitters (those of ``which``, else all; each leaves ``forked``) and add what
    they collected, in the order they would have added it running here (none of the emitters between
    them and the join adds any)."""
    for running in [f for f in forked if which is None or f in which]:
        forked.remove(running)
        back: _ForkedEmit = running.result()
        ctx.collected.diagnostics.extend(back.diagnostics)
        ctx.collected.notes.extend(back.notes)
        ctx.collected.digests.update(back.digests)
        ctx.collected.known.update(back.known)
        ctx.collected.listed.update(back.listed)
        if back.cache and ctx.options.cache is not None:
            ctx.options.cache.adopt(back.cache)
        staging = ctx.options.staging
        if staging is not None:
            staging.kept, staging.linked, staging.written = (
                a + b for a, b in zip(_counters(staging), back.counters))


def _counters(staging: Staging | None) -> tuple[int, int, int]:
    return (staging.kept, staging.linked, staging.written) if staging is not None else (0, 0, 0)


def _result(plan: _Plan, resolution: Resolution, checked: _Checked, manifest: ManifestFile, collected: EmitCollected,
            seconds: float, timings: dict[str, float]) -> BuildResult:
    shown = [(r, _redacted(d)) for r, d in checked.diagnostics]
    notes = [*collected.notes]
    if plan.cache.save_error:
        notes.append(f"the build cache could not be saved ({plan.cache.save_error}); the next build starts without it")
    excluded_from = {i: checked.winning[i].repository.name for i in checked.failing if i in checked.winning}
    return BuildResult(plan.out, resolution, shown, plan.cache.stats.as_dict(), len(manifest.rows) + 1,
                       manifest.size, seconds, checked.failing, timings, notes,
                       excluded_from)


@contextlib.contextmanager
def _sources_folder(cache_root: Path | None, env: Mapping[str, str]) -> Iterator[Path]:
    """Where git, zip and http sources fetch to: ``<cache>/sources``, or without a cache a temporary
    folder removed when the build ends (nothing stays behind outside the output)."""
    if cache_root is not None:
        yield cache_root / "sources"
        return
    tmp = tempfile.mkdtemp(prefix="skillc-sources-", dir=env.get("TMPDIR") or None)
    try:
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# The search index needs only the resolution and the cache, not the skills' bundle files: it is
# computed while the forked workers write those (``emit_skills`` returns before they finish, and the
# artifacts wait for them when first read, so any emitter that reads them is still right).
OVERLAPPED = "index"

# Where this process may fork, the search index is built first in a forked process, beside the
# skills' files and the memory snapshot (up to the docs site's fork the build runs on one core and
# the other is idle: 0.26 s of CPU at 10,000 skills left the build's own path), and joined before
# anything reads its files (the precompressed copies, the manifest).  It writes only ``api/index/``
# and its cache tables (``INDEX_TABLES``), which it hands back (``BuildCache.adopt``).
FORKED_FIRST = OVERLAPPED


# The docs site reads the skills' files and the memory snapshot, and nothing else of the bundle: it
# runs right after them, in a forked process beside the emitters after it where this process may
# fork (``_fork_emitter``), joined before the precompressed copies (which read the site's assets).
# Run here, it runs in the same order: the bundle is byte-identical either way.
FORKED, JOIN_BEFORE = "site", "precompressed"


def _emit_order(emitter: tuple[str, object]) -> int:
    # (a stable sort keeps the others' order)
    return {"skills": 0, OVERLAPPED: 1, "memory": 2, FORKED: 3, JOIN_BEFORE: 5}.get(emitter[0], 4)


def _wait_artifacts(collected: EmitCollected) -> Mapping:
    artifacts = collected.artifacts
    wait = getattr(artifacts, "wait", None)
    return wait() if wait is not None else artifacts  # type: ignore[return-value]


class _Lap:
    """``lap(name)`` records the seconds since the previous lap under ``name``."""
    def __init__(self, into: dict[str, float]) -> None:
        self.into, self.last = into, time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = self.into.get(name, 0.0) + now - self.last
        self.last = now


def _shown_config_files(files, cwd: Path) -> tuple[tuple[str, str], ...]:
    out = []
    for path, digest in files:
        rel = os.path.relpath(path, cwd) if os.path.isabs(path) else path
        out.append((Path(rel).as_posix() if not rel.startswith("..") else path, digest))
    return tuple(out)


def _repository_lookup(listings, resolution) -> Callable[[Diagnostic], str]:
    """``repository_of(d)``: the repository a resolution diagnostic is about (the listing that
    reported it, else the winner whose skill it names: R1xx rules look at winners); "" when none."""
    reported = {(x.code, x.path, x.message): lst.input.repository for lst in listings for x in lst.diagnostics}
    winners = {s.id: s for s in resolution.skills}

    def repository_of(d: Diagnostic) -> str:
        found = reported.get((d.code, d.path, d.message))
        if found is not None:
            return found
        winner = winners.get(d.skill) if d.skill else None
        return winner.repository.name if winner is not None and winner.document.path == d.path else ""

    return repository_of


def _with_excluded_shadowing(resolution: Resolution, listings, failing: Mapping[str, str], settings,
                             diagnostics: list[tuple[str, Diagnostic]]) -> Resolution:
    """``resolution`` with the shadowing rows (and R101 lines) of the IDs left out: a broken winning
    copy withholds the valid copy it shadows, and the manifest and the site say so.  An excluded
    ID is shown redacted (it may be excluded for holding a secret)."""
    full = resolve(listings, settings=settings)
    said = {(d.code, d.path, d.message) for _, d in diagnostics}
    for d in full.diagnostics:
        if d.code == "R101" and d.skill in failing and (d.code, d.path, d.message) not in said:
            diagnostics.append((next((r.winner for r in full.shadowed if r.id == d.skill), ""), d))
    shadowed = tuple(replace(r, id=_redact(r.id)) if r.id in failing else r for r in full.shadowed)
    return replace(resolution, shadowed=shadowed)


def _said_by_lint(resolution, per_skill: Mapping[int, list[Diagnostic]]) -> Callable[[Diagnostic], bool]:
    """Whether a resolution diagnostic repeats what lint already reported for the same skill: an R102
    (a name under several IDs) whose skills all come from one repository, where lint's C801 (with
    the line of the name) said it.  A clash across repositories is R102's alone."""
    winners = {s.id: s for s in resolution.skills}
    repositories: dict[str, set[str]] = {}
    for s in resolution.skills:
        repositories.setdefault(s.name, set()).add(s.repository.name)

    def said(d: Diagnostic) -> bool:
        skill = winners.get(d.skill) if d.code == "R102" and d.skill else None
        return (skill is not None and len(repositories[skill.name]) == 1
                and any(x.code == "C801" for x in per_skill.get(id(skill), ())))

    return said


def _without(listings, failing: Mapping[str, str]):
    if not failing:
        return listings
    return [replace(lst, skills=tuple(s for s in lst.skills if s.id not in failing)) for lst in listings]


def _redact(text: str) -> str:
    return secrets.redact(text)[0]


def _redacted(d: Diagnostic) -> Diagnostic:
    """``d`` as printed and published: a likely secret in a path or an ID (a folder named after a
    token) is redacted like one in a file (messages name paths and IDs too)."""
    if not secrets.scan(f"{d.path}\n{d.skill or ''}\n{d.message}"):
        return d
    return replace(d, path=_redact(d.path), skill=_redact(d.skill) if d.skill else d.skill, message=_redact(d.message))


def _failure_message(failing: Mapping[str, str], manifests: Sequence[str]) -> str:
    ids = sorted(failing, key=path_key)
    shown = "; ".join(f"{_redact(i)} ({_redact(failing[i])})" for i in ids[:10])
    more = f"; and {len(ids) - 10} more" if len(ids) > 10 else ""
    skills = f"{len(ids)} skill{'s' if len(ids) != 1 else ''} failed: {shown}{more}" if ids else ""
    if not manifests:
        return skills
    listed = f"{len(manifests)} manifest{'s' if len(manifests) != 1 else ''} failed lint: " + "; ".join(
        _redact(m) for m in manifests[:10]) + (f"; and {len(manifests) - 10} more" if len(manifests) > 10 else "")
    return f"{skills}; {listed}" if skills else listed


def _lint_summary(config: LintConfig, skills: int, diagnostics) -> dict[str, object]:
    rows = sorted(
        ({"repository": repo, **_redacted(d).to_json()} for repo, d in diagnostics if d.severity is not Severity.INFO),
        key=lambda r: (r["repository"].encode(), r["path"].encode(), r["line"], r["column"], r["code"], r["message"]))
    return {
        "profile": config.profile,
        "skills": skills,
        "errors": sum(1 for r in rows if r["severity"] == "error"),
        "warnings": sum(1 for r in rows if r["severity"] == "warning"),
        "diagnostics": rows,
    }
