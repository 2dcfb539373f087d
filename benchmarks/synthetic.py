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


# Description lengths (characters) at the survey's quantiles p0 p25 p50 p75 p90 p99 max, all 8,134
# descriptions (research/corpora.md §5); a length is drawn by interpolating between them.
DESCRIPTION_QUANTILES = ((0.0, 20), (0.25, 133), (0.5, 241), (0.75, 342), (0.9, 496), (0.99, 703), (1.0, 1000))
# How descriptions are written in YAML (corpora.md §4): block literal, plain, double-quoted, single-quoted, folded.
DESCRIPTION_STYLES = (("|", 3181), ("plain", 3102), ('"', 1421), ("'", 311), (">", 117))
TOOLS = ("Read", "Grep", "Glob", "Edit", "Write", "Bash(git:*)", "Bash(npm:*)", "WebFetch")


def _description(rng: random.Random) -> str:
    u = rng.random()
    for (q0, v0), (q1, v1) in zip(DESCRIPTION_QUANTILES, DESCRIPTION_QUANTILES[1:]):
        if u <= q1:
            target = v0 + (v1 - v0) * (u - q0) / (q1 - q0)
            break
    text = _sentence(rng, rng.randint(6, 14))
    while len(text) < target:
        text += " " + _sentence(rng, rng.randint(6, 14))
    return text[: max(int(target), 20)].rstrip() or text


def _description_yaml(rng: random.Random, desc: str) -> list[str]:
    style = rng.choices([s for s, _ in DESCRIPTION_STYLES], [w for _, w in DESCRIPTION_STYLES])[0]
    if style in "|>":  # a block scalar, wrapped near 80 columns as people write them
        lines, line = [], ""
        for word in desc.split():
            if line and len(line) + len(word) > 78:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        return [f"description: {style}"] + [f"  {ln}" for ln in lines]
    if style == "plain":
        return [f"description: {desc.replace(': ', ' - ')}"]
    if style == "'":
        return ["description: '" + desc.replace("'", "''") + "'"]
    return ['description: "' + desc.replace('"', '\\"') + '"']


def _frontmatter(rng: random.Random, i: int, name: str) -> list[str]:
    """Spec-valid frontmatter (skills-ref accepts it) with the survey's optional keys at its rates:
    license 34%, allowed-tools 36%, compatibility 1%; the non-spec keys real skills carry at the top
    level (version 38%, author 32%, tags) sit under ``metadata``, as the spec asks."""
    fm = ["---", f"name: {name}", *_description_yaml(rng, _description(rng))]
    if rng.random() < 0.34:
        fm.append(f"license: {rng.choice(('MIT', 'Apache-2.0', 'Proprietary. LICENSE.txt has complete terms'))}")
    if rng.random() < 0.01:
        fm.append("compatibility: Requires git, docker and access to the internet")
    if rng.random() < 0.36:
        fm.append("allowed-tools: " + " ".join(sorted(set(rng.choices(TOOLS, k=rng.randint(1, 5))))))
    fm += ["metadata:", f'  version: "1.{i % 10}.0"']
    if rng.random() < 0.32:
        fm.append(f"  author: {rng.choice(WORDS)}-team")
    tags = sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 4))})
    fm += [f"  tags: {', '.join(tags)}", "---"]
    return fm


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
        fm = _frontmatter(rng, i, name)
        paras = []
        for _ in range(rng.randint(3, 30)):
            if rng.random() < 0.2:
                paras.append("## " + _sentence(rng, 3)[:-1])
            paras.append(" ".join(_sentence(rng, rng.randint(5, 18)) for _ in range(rng.randint(1, 5))))
        if rng.random() < 0.3:
            (d / "references").mkdir()
            (d / "references" / "REFERENCE.md").write_text("# Reference\n\n" + _sentence(rng, 30) + "\n")
            paras.append("See [the reference](references/REFERENCE.md).")
        (d / "SKILL.md").write_text("\n".join(fm) + "\n\n# " + name + "\n\n" + "\n\n".join(paras) + "\n")
        ids.append(skill_id)
    return sorted(ids, key=lambda s: s.encode())
