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


@dataclass(frozen=True)
class SkillBase:
    """What a skill's page shows that costs nothing to compute (the build's records, labels), made
    from inputs the key of its memo record holds (``memo_key``: a field made from another input
    adds that input there)."""

    files: tuple[FileInfo, ...]  # (made from the published files' records, which the memo key holds)
    withheld: tuple[tuple[str, str], ...]
    archive: str | None
    repository: str
    location: str
    provenance: Provenance
    shadowed: tuple[ShadowInfo, ...]
    diagnostics: tuple[DiagnosticInfo, ...]
    memory: tuple[Mapping[str, Any], ...]
    flat_name: str


# A skill's memo record (``SkillMemo``): (key, digest, values): ``values`` are its ``SkillInfo``'s
# fields in order, the nested dataclasses as tuples of their fields and the body None when the
# redacted body is the document's own (``_memo_values``).  Plain tuples: they unpickle several times
# faster than dataclasses (``skillc.cache``).
MemoRecord = tuple
SkillMemo = Mapping[str, MemoRecord]  # skill ID -> its record


def _base(skill: SourceSkill, ctx: EmitContext, commits: Mapping[str, str], shadows, diags, memory_notes,
          flat_name: str) -> SkillBase:
    art = ctx.collected.artifacts.get(skill.id)
    if art is not None:
        files = tuple(FileInfo(p, n) for p, _, n in art.files)
        withheld, archive = tuple(art.withheld), (art.archive[0] if art.archive else None)
    else:
        files, withheld, archive = tuple(FileInfo(f.path, f.size) for f in skill.files), (), None
    repo, cwd = skill.repository, ctx.options.cwd
    location = site_location(repo.type, repo.location, cwd, repo.config_file)
    return SkillBase(files, withheld, archive, repository_label(repo.name, cwd), location,
                     _provenance(skill, commits.get(repo.name, ""), location, files[0].path if files else "SKILL.md"),
                     shadows, diags, memory_notes, flat_name)


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
    """The key of a skill's memo record: everything ``_base`` and ``_skill_info`` read, as they
    read it (so a record is found without making its ``SkillBase``): the document, the skills
    emitter's ``published`` records (files with digests, withheld files, archive), the repository's
    fields they show, the build folder ``cwd``
    (shown paths are relative to it), the source's ``commit``, the other copies it ``shadows``,
    its findings ``diags``, memory notes and flat name; and the code (``memo_code_key``).  The
    document is keyed by its raw bytes' SHA-256, path and kind, as the parse cache keys it: its
    frontmatter and body are what parsing those bytes gives, and the parser's code is in the key
    through the cache's ``FORMAT`` and the skillc version (``memo_code_key``), as it is in the parse
    cache's (its ``repr`` was most of the key's cost at 10,000 skills)."""
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
    """The skill's ``SkillInfo``: from its ``memo`` record when that has the same key (a rebuild:
    the secret scan, the reads and making the info were most of the model's cost), else computed;
    the record used goes into ``kept``."""
    art = ctx.collected.artifacts.get(skill.id)
    # (without the skills emitter's records the supporting files' digests are unknown: not memoised)
    key = "" if art is None else memo_key(skill, (tuple(art.files), tuple(art.withheld), art.archive), ctx.options.cwd,
                                          commits.get(skill.repository.name, ""), shadows, diags, memory_notes,
                                          flat_name)
    record = memo.get(skill.id)
    if key and record is not None and record[0] == key:
        kept[skill.id] = record
        return _from_record(record, skill.document.body)
    info = _computed(skill, ctx, _base(skill, ctx, commits, shadows, diags, memory_notes, flat_name))
    if key:
        kept[skill.id] = (key, info.digest, _memo_values(info, skill.document.body))
    return info


def _computed(skill: SourceSkill, ctx: EmitContext, base: SkillBase) -> SkillInfo:
    """A skill's info computed: its texts redacted, its supporting files read."""
    body = redacted(skill.document.body)
    meta = tuple((str(k), redacted(_meta_text(v))) for k, v in sorted(skill.document.meta.items(), key=lambda kv: str(kv[0]))
                 if k not in ("name", "description"))
    tags = tuple(redacted(t) for t in skill_tags(skill))
    texts = text_pages(ctx.out / "api" / "files" / skill.id, [f.path for f in base.files[1:]])
    return _info(skill, base, redacted(skill.name), redacted(skill.description), body, meta, tags, texts)


def _memo_values(s: SkillInfo, document_body: str) -> tuple:
    """``s``'s fields as its memo record keeps them (``_from_record`` makes the info again)."""
    prov = s.provenance
    return (s.id, s.name, s.description, s.collection, s.repository, s.repository_type, s.location, s.tier,
            s.priority, tuple((x.repository, x.priority, x.location) for x in s.shadowed), s.lint, s.warnings,
            tuple((d.severity, d.code, d.path, d.line, d.message) for d in s.diagnostics),
            tuple((f.path, f.size) for f in s.files), s.withheld, s.archive, s.size,
            None if s.body == document_body else s.body, s.body_lines, s.body_tokens, s.metadata, s.memory,
            s.flat_name, s.tags, tuple((t.path, t.text, t.language) for t in s.texts),
            None if prov is None else (prov.location, prov.commit, prov.path, prov.view_url))


def _from_record(record: MemoRecord, document_body: str) -> SkillInfo:
    """The ``SkillInfo`` a memo record keeps (``_memo_values``), with the record's digest."""
    (sid, name, description, collection, repository, repository_type, location, tier, priority, shadowed, lint,
     warnings, diagnostics, files, withheld, archive, size, body, body_lines, body_tokens, metadata, memory,
     flat_name, tags, texts, prov) = record[2]
    info = SkillInfo(
        sid, name, description, collection, repository, repository_type, location, tier, priority,
        tuple(ShadowInfo(*x) for x in shadowed), lint, warnings, tuple(DiagnosticInfo(*d) for d in diagnostics),
        tuple(FileInfo(*f) for f in files), withheld, archive, size, document_body if body is None else body,
        body_lines, body_tokens, metadata, memory, flat_name, tags, tuple(TextPage(*t) for t in texts),
        None if prov is None else Provenance(*prov))
    info.__dict__["digest"] = record[1]  # (the cached property: the record's digest is this info's)
    return info


def _info(skill: SourceSkill, base: SkillBase, name: str, description: str, body: str, meta, tags,
          texts) -> SkillInfo:
    repo, diags = skill.repository, base.diagnostics
    lint = lint_verdict([d.severity for d in diags])
    return SkillInfo(
        id=skill.id, name=name, description=description, collection=collection_of(skill.id),
        repository=base.repository, repository_type=repo.type, location=base.location, tier=repo.tier.value,
        priority=repo.priority, shadowed=base.shadowed, lint=lint[0], warnings=lint[1], diagnostics=diags,
        files=base.files, withheld=base.withheld, archive=base.archive, size=sum(f.size for f in base.files), body=body,
        body_lines=body.count("\n") + (1 if body and not body.endswith("\n") else 0),
        body_tokens=math.ceil(len(body) / 4), metadata=meta, memory=base.memory, flat_name=base.flat_name,
        tags=tags, texts=texts, provenance=base.provenance)


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
