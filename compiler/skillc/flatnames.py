"""Flat skill names: how a skill ID (``extraction/medical/diagnosis``) becomes the one-segment name
that flat readers need: the agentskills.io discovery index read by ``npx skills``, the MCP skills
extension, Claude Code plugin names, a ``skills/<name>/`` folder.

The rule, deterministic over the set of IDs a bundle publishes:

1. each ID's *leaf* (its last segment) is normalised: lower case, every run of characters outside
   ``[a-z0-9]`` becomes one ``-``, no ``-`` at either end (``My_Skill`` → ``my-skill``), ``skill``
   when nothing is left;
2. a leaf that one ID alone has is that ID's name (``skills/algorithmic-art`` → ``algorithmic-art``);
3. IDs whose leaves collide are all named by their whole ID normalised the same way, segments joined
   by ``-`` (``python/testing`` → ``python-testing``, ``js/testing`` → ``js-testing``), and each is a
   ``Collision`` the build reports;
4. names still equal after step 3 (``a/b-c`` and ``a-b/c``) get ``-2``, ``-3``… in byte order of
   their IDs, the first keeping the bare name;
5. a name over 64 characters (the specification's limit) is cut to 55 and ends ``-`` plus the first
   8 hex digits of the SHA-256 of the ID.

Every name matches ``FLAT_NAME_RE`` (the specification's ``name`` pattern, the MCP skills
extension's and ``npx skills``' ``[a-z0-9-]``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from .model import NAME_RE

FLAT_NAME_RE = NAME_RE  # (the specification's name pattern)
MAX_FLAT_NAME = 64
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Collision:
    """IDs whose leaves normalise to the same name; each got the longer name in ``names``."""

    leaf: str
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FlatNames:
    names: Mapping[str, str]  # skill ID -> flat name
    collisions: tuple[Collision, ...]


def normalise(text: str) -> str:
    """``text`` lower-cased with every run outside ``[a-z0-9]`` as one ``-`` (``skill`` if empty)."""
    return _NOT_ALNUM.sub("-", text.lower()).strip("-") or "skill"


def _capped(name: str, skill_id: str) -> str:
    if len(name) <= MAX_FLAT_NAME:
        return name
    digest = hashlib.sha256(skill_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return name[:55].rstrip("-") + "-" + digest


def assign_flat_names(skill_ids: Iterable[str]) -> FlatNames:
    """The flat name of every ID (the module's rule), and the leaf collisions to report."""
    ids = sorted(set(skill_ids), key=lambda i: i.encode("utf-8", "surrogatepass"))
    by_leaf: dict[str, list[str]] = {}
    for skill_id in ids:
        by_leaf.setdefault(normalise(skill_id.rsplit("/", 1)[-1]), []).append(skill_id)
    wanted: dict[str, str] = {}
    collisions = []
    for leaf, owners in by_leaf.items():
        if len(owners) == 1:
            wanted[owners[0]] = _capped(leaf, owners[0])
            continue
        collisions.append(Collision(leaf, tuple(owners)))
        for skill_id in owners:
            wanted[skill_id] = _capped("-".join(normalise(s) for s in skill_id.split("/")), skill_id)
    names: dict[str, str] = {}
    taken: set[str] = set()
    for skill_id in ids:  # byte order: the first keeps the bare name
        name, n = wanted[skill_id], 1
        while name in taken:
            n += 1
            name = _capped(f"{wanted[skill_id]}-{n}", skill_id + f"\x00{n}")
        taken.add(name)
        names[skill_id] = name
    collisions.sort(key=lambda c: c.leaf)
    return FlatNames(names, tuple(collisions))


__all__ = ["FLAT_NAME_RE", "MAX_FLAT_NAME", "Collision", "FlatNames", "assign_flat_names", "normalise"]
