"""What the docs site shows, computed from an ``EmitContext`` (pure: no I/O but reading the memory
snapshot another emitter wrote).

``site_model(ctx) -> SiteModel``: one ``SkillInfo`` per published skill (provenance, lint, sizes,
files, diagnostics, memory notes), the collections with their direct skills, the shadowing table,
the lint report and the memory snapshot.  Text from skills and memories is kept as it is (the page
renderer escapes it) except for secrets, which are redacted again here so the site never holds a
copy the rest of the bundle does not.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from ... import secrets
from ...discover.walk import path_key
from ...index.emit import skill_tags
from ...resolve_types import EmitContext, SourceSkill
from ...version import __version__
from .provenance import Provenance, TextPage, repository_label, site_location, text_pages, view_url

MEMORY_SNAPSHOT = "api/memory/snapshot.json"
CATEGORIES = (  # seed 000 §6.4.2: filter label, badge, category value
    ("preference", "Preferences", "[PREF]"),
    ("convention", "Conventions", "[CONV]"),
    ("pattern", "Patterns", "[PATN]"),
    ("correction", "Corrections", "[WARN]"),
    ("fact", "Facts", "[FACT]"),
)


@dataclass(frozen=True)
class FileInfo:
    path: str  # relative to the skill folder
    size: int


@dataclass(frozen=True)
class ShadowInfo:
    repository: str
    priority: int
    location: str


@dataclass(frozen=True)
class DiagnosticInfo:
    severity: str
    code: str
    path: str
    line: int
    message: str


@dataclass(frozen=True)
class SkillInfo:
    id: str
    name: str
    description: str
    collection: str  # "" at the top
    repository: str
    repository_type: str
    location: str
    tier: str
    priority: int
    shadowed: tuple[ShadowInfo, ...]
    lint: str  # ok | warning
    warnings: int
    diagnostics: tuple[DiagnosticInfo, ...]
    files: tuple[FileInfo, ...]
    withheld: tuple[tuple[str, str], ...]
    archive: str | None  # bundle path of the zip
    size: int  # bytes of the published files
    body: str
    body_lines: int
    body_tokens: int  # ceil(characters / 4), the usual estimate
    metadata: tuple[tuple[str, str], ...]  # frontmatter keys other than name/description, as text
    memory: tuple[Mapping[str, Any], ...] = ()  # active notes in namespace skill/<id> or skill/<name>
    flat_name: str = ""  # its name for flat readers (npx skills --skill NAME, skills/<name>/, plugins)
    tags: tuple[str, ...] = ()
    texts: tuple[TextPage, ...] = ()  # supporting text files, each a page of its own
    provenance: Provenance | None = None

    @cached_property
    def digest(self) -> str:
        """Everything a page can show of the skill, digested (the model's values print the same in
        every process: strings, numbers, tuples, mappings built in a fixed order).  ``site_model_memo``
        sets it from the skill's memo record; a copy made with ``dataclasses.replace`` computes its own."""
        return hashlib.sha256(repr(self).encode("utf-8", "surrogateescape")).hexdigest()

    @property
    def main_file(self) -> str:
        """The published name of the skill's SKILL.md (``skill.md`` for a skill stored so): always first."""
        return self.files[0].path if self.files else "SKILL.md"


@dataclass(frozen=True)
class CollectionInfo:
    path: str
    description: str
    count: int  # skills at or below
    children: tuple[str, ...]  # direct sub-collections
    skills: tuple[str, ...]  # IDs directly in it


@dataclass(frozen=True)
class InputInfo:
    repository: str
    type: str
    location: str
    resolved: str | None


@dataclass(frozen=True)
class MemoryInfo:
    as_of: str
    entries: tuple[Mapping[str, Any], ...]  # active and superseded, sorted as in the snapshot
    pruned: int
    redactions: int
    counts: Mapping[str, int]  # per badge category (active semantic entries), plus "total"


@dataclass(frozen=True)
class SiteModel:
    version: str
    skills: tuple[SkillInfo, ...]  # by ID bytes
    collections: tuple[CollectionInfo, ...]  # by path bytes
    top_skills: tuple[str, ...]  # IDs outside any collection
    inputs: tuple[InputInfo, ...]
    shadowing: tuple[Mapping[str, Any], ...]
    lint_profile: str
    lint_errors: int  # every finding of every linted copy: excluded and shadowed ones too
    lint_warnings: int
    linted: int  # skills linted (every repository's copy)
    published_warnings: int  # the published skills' own warnings (what their pages show)
    lint_rows: tuple[Mapping[str, Any], ...]
    excluded: tuple[tuple[str, str], ...]
    memory: MemoryInfo | None
    extra: Mapping[str, Any] = field(default_factory=dict)


def redacted(text: str) -> str:
    return secrets.redact(text)[0] if text else text


def _meta_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def collection_of(skill_id: str) -> str:
    return skill_id.rsplit("/", 1)[0] if "/" in skill_id else ""


def _provenance(skill: SourceSkill, commit: str, location: str, main_file: str) -> Provenance:
    repo = skill.repository
    path = "/".join(p for p in (repo.skills_root.strip("/"), skill.id, main_file) if p)
    git = repo.type == "git"
    return Provenance(location=location, commit=commit if git else "", path=path,
                      view_url=view_url(repo.location, commit, path) if git else "")


def lint_verdict(severities: list[str]) -> tuple[str, int]:
    """A published skill's lint column, from the severities of its findings: ``(ok | warning, warnings)``."""
    warnings = sum(1 for sev in severities if sev == "warning")  # (a published skill has no error)
    return ("warning" if warnings else "ok", warnings)


def lint_verdicts(summary: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, int]]:
    """``lint_verdict`` of every skill the build's ``lint_summary`` has findings for, by (repository, ID):
    a skill's findings are its published copy's, the winner's repository only."""
    severities: dict[tuple[str, str], list[str]] = {}
    for r in summary.get("diagnostics", ()):
        if r.get("skill"):
            severities.setdefault((r.get("repository", ""), r["skill"]), []).append(r["severity"])
    return {key: lint_verdict(sevs) for key, sevs in severities.items()}


# A skill's memo record (``SkillMemo``): (key, digest, name, description, body or None when the
# redacted body is the document's own, body lines, body tokens, metadata, tags, texts as (path,
# text, language) tuples, provenance as (location, commit, path, view_url)): what costs a
# secret scan, a read or a computation; the rest of its ``SkillInfo`` is the build's records as
# they are (``_info``).  Plain tuples: they unpickle several times faster than dataclasses
# (``skillc.cache``).
MemoRecord = tuple
SkillMemo = Mapping[str, MemoRecord]  # skill ID -> its record


@lru_cache(maxsize=1)
def memo_code_key() -> str:
    """What turns a skill's inputs into its ``SkillInfo`` besides them: this package's code and
    templates (``keys.renderer_key``), the secret scan's code, the build cache's format, the
    Pygments version (``language_of``)."""
    from ...cache import FORMAT
    from .keys import renderer_key, tool_key

    h = hashlib.sha256(f"{renderer_key()}|{FORMAT}|pygments={tool_key('pygments')}\0".encode())
    h.update(Path(secrets.__file__).read_bytes())
    return h.hexdigest()


def memo_key(skill: SourceSkill, published: tuple, cwd: str | None, commit: str, shadows, diags, memory_notes,
             flat_name: str) -> str:
    """The key of a skill's memo record: everything ``_skill_info`` reads, as it reads it (so a
    record is found by one key check): the document, the skills emitter's ``published`` records
    (files with digests, withheld files, archive), the repository's fields the info shows, the
    build folder ``cwd`` (shown paths are relative to it), the source's ``commit``, the other
    copies it ``shadows``, its findings ``diags``, memory notes and flat name; and the code
    (``memo_code_key``).  The document is keyed by its raw bytes' SHA-256, path and kind, as the
    parse cache keys it: its frontmatter and body are what parsing those bytes gives, and the
    parser's code is in the key through the cache's ``FORMAT`` and the skillc version
    (``memo_code_key``), as it is in the parse cache's (its ``repr`` was most of the key's cost at
    10,000 skills)."""
    doc, repo = skill.document, skill.repository
    h = hashlib.sha256(memo_code_key().encode())
    # (fields and tuples, not the dataclasses' reprs: those were half of the key's cost)
    h.update(repr((skill.id, doc.kind.value, doc.path, doc.sha256, doc.size, repo.name, repo.type, repo.location,
                   repo.config_file, repo.skills_root, repo.tier.value, repo.priority, cwd, commit, published,
                   [(s.repository, s.priority, s.location) for s in shadows],
                   [(d.severity, d.code, d.path, d.line, d.message) for d in diags], memory_notes,
                   flat_name)).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _skill_info(skill: SourceSkill, ctx: EmitContext, commits: Mapping[str, str], shadows, diags, memory_notes,
                flat_name: str, memo: SkillMemo, kept: dict[str, MemoRecord]) -> SkillInfo:
    """The skill's ``SkillInfo``: its expensive values from its ``memo`` record when that has the
    same key (a rebuild: the secret scan and the reads are most of the model's cost), else
    computed; the record used goes into ``kept``."""
    art = ctx.collected.artifacts.get(skill.id)
    commit = commits.get(skill.repository.name, "")
    # (without the skills emitter's records the supporting files' digests are unknown: not memoised)
    key = "" if art is None else memo_key(skill, (tuple(art.files), tuple(art.withheld), art.archive), ctx.options.cwd,
                                          commit, shadows, diags, memory_notes, flat_name)
    record = memo.get(skill.id)
    if not key or record is None or record[0] != key:
        record = _memo_record(skill, ctx, commit, key, (shadows, diags, memory_notes, flat_name))
    if key:
        kept[skill.id] = record
    return _info(skill, ctx, (shadows, diags, memory_notes, flat_name), record)


def _published(skill: SourceSkill, ctx: EmitContext) -> tuple[tuple[FileInfo, ...], tuple, str | None]:
    """The skill's published files, withheld files and archive (the skills emitter's records)."""
    art = ctx.collected.artifacts.get(skill.id)
    if art is None:
        return tuple(FileInfo(f.path, f.size) for f in skill.files), (), None
    return tuple(FileInfo(p, n) for p, _, n in art.files), tuple(art.withheld), art.archive[0] if art.archive else None


def _memo_record(skill: SourceSkill, ctx: EmitContext, commit: str, key: str, inputs: tuple) -> MemoRecord:
    """A skill's expensive values computed: its texts redacted, its supporting files read, its
    provenance; its digest from the info they make with ``inputs`` (``_info``)."""
    body = redacted(skill.document.body)
    meta = tuple((str(k), redacted(_meta_text(v))) for k, v in sorted(skill.document.meta.items(), key=lambda kv: str(kv[0]))
                 if k not in ("name", "description"))
    tags = tuple(redacted(t) for t in skill_tags(skill))
    files = _published(skill, ctx)[0]
    texts = text_pages(ctx.out / "api" / "files" / skill.id, [f.path for f in files[1:]])
    repo = skill.repository
    location = site_location(repo.type, repo.location, ctx.options.cwd, repo.config_file)
    prov = _provenance(skill, commit, location, files[0].path if files else "SKILL.md")
    record = ("", "", redacted(skill.name), redacted(skill.description), None if body == skill.document.body else body,
              body.count("\n") + (1 if body and not body.endswith("\n") else 0), math.ceil(len(body) / 4), meta, tags,
              tuple((t.path, t.text, t.language) for t in texts),
              (prov.location, prov.commit, prov.path, prov.view_url))
    return (key, _info(skill, ctx, inputs, record).digest if key else "", *record[2:])


def _info(skill: SourceSkill, ctx: EmitContext, inputs: tuple, record: MemoRecord) -> SkillInfo:
    """The ``SkillInfo`` of ``skill``: the values of its memo ``record`` (with its digest, when it has
    one), the rest from the build's records and ``inputs``, (shadows, diags, memory notes, flat
    name) as ``site_model_memo`` collected them."""
    _, digest, name, description, body, body_lines, body_tokens, meta, tags, texts, prov = record
    shadows, diags, memory_notes, flat_name = inputs
    repo, cwd = skill.repository, ctx.options.cwd
    files, withheld, archive = _published(skill, ctx)
    lint = lint_verdict([d.severity for d in diags])
    info = SkillInfo(
        skill.id, name, description, collection_of(skill.id), repository_label(repo.name, cwd), repo.type,
        site_location(repo.type, repo.location, cwd, repo.config_file), repo.tier.value, repo.priority, shadows,
        lint[0], lint[1], diags, files, withheld, archive, sum(f.size for f in files),
        skill.document.body if body is None else body, body_lines, body_tokens, meta, memory_notes, flat_name, tags,
        tuple(TextPage(*t) for t in texts), Provenance(*prov))
    if digest:
        info.__dict__["digest"] = digest  # (the cached property: the record's digest is this info's)
    return info


def read_memory(out: Path) -> MemoryInfo | None:
    path = out / MEMORY_SNAPSHOT
    if not path.is_file():
        return None
    doc = json.loads(path.read_bytes())
    entries = tuple(doc.get("entries", ()))
    counts = {c: 0 for c, _, _ in CATEGORIES}
    active = [e for e in entries if e.get("status", "active") == "active"]
    for e in active:
        if e.get("type") == "semantic":
            cat = e.get("category") or "fact"
            counts[cat] = counts.get(cat, 0) + 1
    counts["total"] = len(active)
    return MemoryInfo(as_of=str(doc.get("as_of", "")), entries=entries, pruned=len(doc.get("pruned", ())),
                      redactions=len(doc.get("redactions", ())), counts=counts)


def site_model(ctx: EmitContext) -> SiteModel:
    """What the site shows (``site_model_memo`` without a memo)."""
    return site_model_memo(ctx, {})[0]


def site_model_memo(ctx: EmitContext, memo: SkillMemo) -> tuple[SiteModel, dict[str, MemoRecord]]:
    """What the site shows, each skill's expensive values taken from ``memo`` where its record's key
    is the skill's (``_skill_info``); returns the model and the memo of this build's skills."""
    res = ctx.resolution
    cwd = ctx.options.cwd
    kinds = {i.repository: i.type for i in res.inputs}
    shadows = _shadows(res.shadowed, kinds, cwd)
    summary = ctx.options.lint_summary
    rows = tuple(summary.get("diagnostics", ()))
    messages = _redacted_messages(rows)
    # A skill's findings are its published copy's: the winner's repository only (a shadowed copy of
    # the same ID has its own), lint and resolution (R1xx) alike.
    per_skill: dict[tuple[str, str], list[DiagnosticInfo]] = {}
    for r in rows:
        if r.get("skill"):
            per_skill.setdefault((r.get("repository", ""), r["skill"]), []).append(DiagnosticInfo(
                r["severity"], r["code"], r["path"], r["line"], messages[r["message"]]))
    memory = read_memory(ctx.out)
    notes = _skill_notes(memory)
    flat = res.flat_names  # (the resolve stage's one mapping: skillc.flatnames)
    commits = {i.repository: i.resolved or "" for i in reversed(res.inputs)}  # (the first input of a name)
    kept: dict[str, MemoRecord] = {}
    skills = tuple(
        _skill_info(s, ctx, commits, tuple(shadows.get(s.id, ())), tuple(per_skill.get((s.repository.name, s.id), ())),
                    tuple(notes.get(s.id, ()) or notes.get(s.name, ())), flat.get(s.id, ""), memo, kept)
        for s in res.skills)
    paths = {c.path for c in res.collections}
    children: dict[str, list[str]] = {p: [] for p in paths}
    direct: dict[str, list[str]] = {p: [] for p in paths}
    top: list[str] = []
    for p in sorted(paths, key=path_key):
        parent = collection_of(p)
        if parent in children:
            children[parent].append(p)
    for s in skills:
        direct.get(s.collection, top).append(s.id)
    collections = tuple(
        CollectionInfo(c.path, redacted(c.description), c.count, tuple(children[c.path]), tuple(direct[c.path]))
        for c in sorted(res.collections, key=lambda c: path_key(c.path)))
    inputs = tuple(InputInfo(repository_label(i.repository, cwd), i.type, site_location(i.type, i.location, cwd),
                             i.resolved) for i in res.inputs)
    published = {s.id for s in res.skills}
    shadowing = tuple({"id": s.id, "published": s.id in published, "winner": repository_label(s.winner, cwd),
                       "winner_priority": s.winner_priority, "loser": repository_label(s.loser, cwd),
                       "loser_priority": s.loser_priority,
                       "loser_source": site_location(kinds.get(s.loser, ""), s.loser_source, cwd)} for s in res.shadowed)
    reasons = ctx.options.excluded_reasons
    return SiteModel(
        version=__version__, skills=skills, collections=collections, top_skills=tuple(top), inputs=inputs,
        shadowing=shadowing, lint_profile=str(summary.get("profile", "")),
        lint_errors=int(summary.get("errors", 0)), lint_warnings=int(summary.get("warnings", 0)),
        linted=int(summary.get("skills", 0)), published_warnings=sum(s.warnings for s in skills),
        lint_rows=tuple({**r, "message": messages[r["message"]], "repository": repository_label(r.get("repository", ""), cwd)}
                        for r in rows),
        excluded=tuple((redacted(e), redacted(str(reasons.get(e, "lint errors")))) for e in res.excluded),
        memory=memory), kept


def _shadows(shadowed, kinds: Mapping[str, str], cwd: str | None) -> dict[str, list[ShadowInfo]]:
    """The copies each published skill shadows, by its ID."""
    shadows: dict[str, list[ShadowInfo]] = {}
    for sh in shadowed:
        shadows.setdefault(sh.id, []).append(ShadowInfo(
            repository_label(sh.loser, cwd), sh.loser_priority, site_location(kinds.get(sh.loser, ""), sh.loser_source, cwd)))
    return shadows


def _redacted_messages(rows) -> dict[str, str]:
    """Each distinct finding message redacted once (a rule's message repeats across skills)."""
    return {m: redacted(m) for m in {r["message"] for r in rows}}


def _skill_notes(memory: MemoryInfo | None) -> dict[str, list]:
    """The active memory entries in each ``skill/<id or name>`` namespace."""
    notes: dict[str, list] = {}
    if memory is not None:
        for e in memory.entries:
            ns = str(e.get("namespace", ""))
            if ns.startswith("skill/") and e.get("status", "active") == "active":
                notes.setdefault(ns[len("skill/"):], []).append(e)
    return notes
