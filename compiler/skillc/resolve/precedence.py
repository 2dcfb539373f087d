"""The resolve stage (pure): precedence, shadowing, ID safety, collections, browsing and queries.

``resolve(listings, settings=…)`` merges what every source offers into one ``Resolution``:

* the same ID offered twice: the higher priority wins, then the earlier declaration; each loser is a
  ``Shadowing`` row and an R101 diagnostic;
* the same ``name`` under different IDs: R102 warning; IDs that differ only by case: R103 error;
  IDs unsafe in a URL or a file name: R104 error;
* collections at every depth: every ancestor path of every ID, described by ``COLLECTION.md``
  (its first line of prose) or "N skills", counting the skills at or below it.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from .. import secrets
from ..flatnames import FlatNames, assign_flat_names

# (id_problem lives in the model, which sources and the bundle reader import; re-exported here)
from ..model import SKILL_REF_ID, Diagnostic, RuleRef, file_name_problem, id_problem, path_key, shown_path
from ..resolve_types import (
    DUPLICATE_SKILL_NAME,
    FLAT_NAME_COLLISION,
    ID_CASE_COLLISION,
    ID_NOT_INVOCABLE,
    SKILL_SHADOWED,
    UNPUBLISHABLE_FILE_NAME,
    UNSAFE_SKILL_ID,
    Collection,
    Resolution,
    Shadowing,
    SourceListing,
    SourceSkill,
)

_SKILL_REF_ID = re.compile(SKILL_REF_ID)


def collection_description(text: str) -> str:
    """The first line of prose of a COLLECTION.md (frontmatter, comments and blank lines skipped;
    a heading is used only when there is no prose)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i, ln in enumerate(lines[1:], 1) if ln.strip() == "---"), None)
        if end is not None:
            lines = lines[end + 1:]
    heading = None
    in_comment = False
    for raw in lines:
        line = raw.strip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if line.startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if not line:
            continue
        if line.startswith("#"):
            heading = heading or line.lstrip("#").strip()
            continue
        return line
    return heading or ""


def _count_text(n: int) -> str:
    return "1 skill" if n == 1 else f"{n} skills"


def _diag(rule: RuleRef, skill: SourceSkill, message: str) -> Diagnostic:
    return rule.diagnostic(skill.document.path, 0, 0, message, skill.id)


def precedence(s: SourceSkill) -> tuple[int, int]:
    """Sort key of the copies of one ID: the first wins (higher priority, then declared first)."""
    return (-s.repository.priority, s.repository.order)


def winners_of(listings: Sequence[SourceListing]) -> dict[str, SourceSkill]:
    """The copy of each ID that ``resolve`` publishes."""
    best: dict[str, SourceSkill] = {}
    for listing in listings:
        for skill in listing.skills:
            held = best.get(skill.id)
            if held is None or precedence(skill) < precedence(held):
                best[skill.id] = skill
    return best


def resolve(listings: Sequence[SourceListing], *, settings: Mapping[str, object] | None = None) -> Resolution:
    """Merge listings (in any order: precedence comes from each repository's priority and order).

    Pure: reads only the listings.  Winners are sorted by ID bytes, shadowing rows by (ID, loser's
    precedence), collections by path bytes.
    """
    diags: list[Diagnostic] = []
    for listing in listings:
        diags.extend(listing.diagnostics)
    offers: dict[str, list[SourceSkill]] = {}
    for listing in listings:
        for skill in listing.skills:
            offers.setdefault(skill.id, []).append(skill)

    winners: list[SourceSkill] = []
    shadowed: list[Shadowing] = []
    for skill_id in sorted(offers, key=path_key):
        ranked = offers[skill_id]
        if len(ranked) > 1:  # (nearly every ID is offered once)
            ranked = sorted(ranked, key=precedence)
        win = ranked[0]
        winners.append(win)
        for lose in ranked[1:]:
            shadowed.append(Shadowing(skill_id, win.repository.name, lose.repository.name, _shown(win),
                                      _shown(lose), win.repository.priority, lose.repository.priority))
            why = ("higher priority" if win.repository.priority > lose.repository.priority
                   else "same priority, declared first")
            diags.append(_diag(SKILL_SHADOWED, win,
                               f"skill {skill_id!r} from repository {win.repository.name!r} (priority "
                               f"{win.repository.priority}) shadows the one from {lose.repository.name!r} "
                               f"(priority {lose.repository.priority}): {why}"))

    for skill in winners:
        for f in skill.files[1:]:
            problem = file_name_problem(f.path)
            if problem:
                diags.append(_diag(UNPUBLISHABLE_FILE_NAME, skill, f"file '{shown_path(f.path)}' of skill "
                                   f"{secrets.redact(skill.id)[0]!r} cannot be published: {problem}; rename it"))
                break
        problem = id_problem(skill.id)
        if problem:
            diags.append(_diag(UNSAFE_SKILL_ID, skill, f"skill ID {secrets.redact(skill.id)[0]!r} is not "
                               f"safe in a URL or a file name: {problem}"))
        elif not _SKILL_REF_ID.fullmatch(skill.id):
            diags.append(_diag(ID_NOT_INVOCABLE, skill, f"skill ID {secrets.redact(skill.id)[0]!r} cannot "
                               "be invoked as /<id> in Meerkat (its /skill-ref syntax takes lowercase letters, "
                               "digits, '-' and '/')"))

    # same name under different IDs
    by_name: dict[str, list[SourceSkill]] = {}
    for skill in winners:
        by_name.setdefault(skill.name, []).append(skill)
    for name, group in by_name.items():
        if len(group) > 1:  # (one message for all: a name shared by thousands held a list in each)
            ids = ", ".join(repr(s.id) for s in group[:5]) + (f" and {len(group) - 5} more" if len(group) > 5 else "")
            message = f"the name {name!r} is used by {len(group)} skills: {ids}"
            for skill in group:
                diags.append(_diag(DUPLICATE_SKILL_NAME, skill, message))

    diags.extend(_case_collisions(winners))

    flat = assign_flat_names(s.id for s in winners)
    diags.extend(flat_name_diagnostics(flat, {s.id: s for s in winners}))
    collections = derive_collections(winners, listings)
    inputs = tuple(listing.input for listing in sorted(listings, key=lambda li: _order(li)))
    diags.sort(key=Diagnostic.sort_key)
    return Resolution(tuple(winners), tuple(shadowed), collections, inputs, tuple(diags),
                      settings=dict(settings or {}), flat_names=flat.names)


def _case_collisions(winners: Sequence[SourceSkill]) -> list[Diagnostic]:
    """R103 for IDs and collection paths that differ only by case: each spelling of a path, with the
    first skill (in ID order) at or below it."""
    first: dict[str, SourceSkill] = {}  # every path (collections, then the ID) -> its first skill
    for skill in winners:
        skill_id = skill.id
        cut = skill_id.find("/")
        while cut > 0:  # (a collection is met once per skill in it: a lookup, not a split and join)
            if skill_id[:cut] not in first:
                first[skill_id[:cut]] = skill
            cut = skill_id.find("/", cut + 1)
        first.setdefault(skill_id, skill)
    spellings: dict[str, dict[str, SourceSkill]] = {}
    for node, skill in first.items():
        spellings.setdefault(node.casefold(), {})[node] = skill
    out = []
    for folded in sorted((f for f, v in spellings.items() if len(v) > 1), key=path_key):
        variants = spellings[folded]
        names = sorted(variants, key=path_key)
        for node in names:
            out.append(_diag(ID_CASE_COLLISION, variants[node],
                             f"{' and '.join(repr(n) for n in names)} differ only by case; they collide "
                             "on case-insensitive filesystems and hosts"))
    return out


def flat_name_diagnostics(flat: FlatNames, by_id: Mapping[str, SourceSkill]) -> list[Diagnostic]:
    """R112 for each skill whose leaf another skill shares: it is published under its whole ID."""
    out = []
    for collision in flat.collisions:
        others = ", ".join(repr(i) for i in collision.ids[:5]) + (
            f" and {len(collision.ids) - 5} more" if len(collision.ids) > 5 else "")
        for skill_id in collision.ids:
            skill = by_id[skill_id]
            out.append(FLAT_NAME_COLLISION.diagnostic(
                skill.document.path, *_name_position(skill),
                f"the flat name {collision.leaf!r} is shared by {others}: skill "
                f"{secrets.redact(skill_id)[0]!r} is published to flat readers (npx skills, "
                f"plugins, skills/ folders) as {flat.names[skill_id]!r}", skill_id))
    return out


def _name_position(skill: SourceSkill) -> tuple[int, int]:
    """Where the frontmatter's ``name`` is (else the file's start)."""
    fm = skill.document.frontmatter
    if fm is not None and ("name",) in fm.keys:
        pos = fm.keys[("name",)]
        return pos.line, pos.column
    return 1, 1


def _order(listing: SourceListing) -> tuple[int, str]:
    repo = listing.repository or (listing.skills[0].repository if listing.skills else None)
    return (repo.order if repo else 1 << 30, listing.input.repository)


def _priority(listing: SourceListing) -> int:
    repo = listing.repository or (listing.skills[0].repository if listing.skills else None)
    return repo.priority if repo else 0


def _shown(skill: SourceSkill) -> str:
    return re.sub(r"(://)[^/@\s]+@", r"\1***@", skill.repository.location)


def derive_collections(skills: Sequence[SourceSkill], listings: Sequence[SourceListing] = ()) -> tuple[Collection, ...]:
    """Every ancestor path of every ID, counted (skills at or below) and described.

    The description is the first line of prose of the COLLECTION.md offered by the highest-precedence
    repository that has one and offers skills below it (its include/exclude globs may leave that
    subtree out), else "N skills".
    """
    counts: dict[str, int] = {}
    for skill in skills:
        parts = skill.id.split("/")
        for i in range(1, len(parts)):
            path = "/".join(parts[:i])
            counts[path] = counts.get(path, 0) + 1
    docs: dict[str, str] = {}
    ranked = sorted(listings, key=lambda li: (-_priority(li), _order(li)))
    for listing in ranked:
        if not listing.collection_docs:
            continue
        offered: set[str] = set()
        for skill in listing.skills:
            cut = skill.id.find("/")
            while cut > 0:
                offered.add(skill.id[:cut])
                cut = skill.id.find("/", cut + 1)
        for path, text in listing.collection_docs.items():
            if path in counts and path not in docs and path in offered:
                # (published in the collection list, the inventory and the site, and printed by
                # browse: COLLECTION.md is no skill, whose secrets would keep it out of the bundle)
                desc = secrets.redact(collection_description(text), strict=True)[0]  # (the gate audits it)
                if desc:
                    docs[path] = desc
    return tuple(Collection(path, docs.get(path, _count_text(counts[path])), counts[path])
                 for path in sorted(counts, key=path_key))


def browse(resolution: Resolution, path: str) -> tuple[list[SourceSkill], list[Collection]]:
    """Seed 004 browsing: the skills directly in ``path`` ("" = root) and its immediate subcollections.

    An unknown path gives two empty lists (browsing an empty collection is not an error).
    """
    path = path.strip("/")
    depth = 0 if not path else path.count("/") + 1
    prefix = f"{path}/" if path else ""
    skills = [s for s in resolution.skills if s.id.startswith(prefix) and s.id.count("/") == depth]
    subs = [c for c in resolution.collections if c.path.startswith(prefix) and c.path.count("/") == depth]
    return skills, subs


def query(resolution: Resolution, text: str) -> list[SourceSkill]:
    """Seed 004 search: skills whose name or description contains ``text`` (case-insensitive), by ID.

    Search is global (all collections); an empty query matches every skill.
    """
    needle = text.strip().casefold()
    return [s for s in resolution.skills if needle in s.name.casefold() or needle in s.description.casefold()]


__all__ = ["browse", "collection_description", "derive_collections", "id_problem", "query", "resolve"]
