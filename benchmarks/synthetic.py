"""A seeded synthetic corpus of skills: realistic sizes, nesting, frontmatter and bodies."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "pdf extract table form merge review code test deploy docker kubernetes terraform python rust "
    "typescript react api http json yaml schema lint format commit branch release changelog security "
    "audit secret token database sql query index search cache memory skill agent prompt context "
    "document markdown image chart plot data csv excel report email calendar slack github issue pull "
    "request pipeline build compile bundle static site server client route config env variable"
).split()
CATEGORIES = ("engineering", "data", "docs", "ops", "security", "design", "research", "productivity")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_corpus(root: Path, count: int, seed: int) -> list[str]:
    """Write ``count`` skills under ``root``; return their IDs in byte order."""
    rng = random.Random(seed)
    ids = []
    for i in range(count):
        cat = CATEGORIES[i % len(CATEGORIES)]
        sub = f"group-{(i // 40) % 25:02d}"
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:05d}"
        skill_id = f"{cat}/{sub}/{name}"
        d = root / skill_id
        d.mkdir(parents=True)
        tags = sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 4))})
        desc = " ".join(_sentence(rng, rng.randint(6, 14)) for _ in range(rng.randint(1, 3)))
        paras = []
        for _ in range(rng.randint(3, 30)):
            if rng.random() < 0.2:
                paras.append("## " + _sentence(rng, 3)[:-1])
            paras.append(" ".join(_sentence(rng, rng.randint(5, 18)) for _ in range(rng.randint(1, 5))))
        if rng.random() < 0.3:
            (d / "references").mkdir()
            (d / "references" / "REFERENCE.md").write_text("# Reference\n\n" + _sentence(rng, 30) + "\n")
            paras.append("See [the reference](references/REFERENCE.md).")
        fm = [
            "---",
            f"name: {name}",
            f"description: {desc}",
            "license: MIT",
            f"tags: [{', '.join(tags)}]",
            "metadata:",
            f'  version: "1.{i % 10}.0"',
            "---",
        ]
        (d / "SKILL.md").write_text("\n".join(fm) + "\n\n# " + name + "\n\n" + "\n\n".join(paras) + "\n")
        ids.append(skill_id)
    return sorted(ids, key=lambda s: s.encode())
