"""Rules emitted by the discovery stage (codes D1xx)."""

from ....discover import rules as discover_rules
from ..registry import declare

declare(
    discover_rules.SKILL_FILE_NAME_CASE, "skill-file-name-case", "The skill file is named `skill.md` or another case variant of `SKILL.md`.",
    rationale="""
        The specification and its client guide look for a file named exactly `SKILL.md`; skills-ref also
        accepts `skill.md`, and 30 real skills use a lower-case or mixed-case name. skillc accepts them
        so nothing is lost, and warns because a spec-following client will not find the skill.
    """,
    bad="my-skill/skill.md", good="my-skill/SKILL.md", scope="discovery",
)
declare(
    discover_rules.DANGLING_SYMLINK, "dangling-symlink", "A symbolic link points at nothing.",
    rationale="A dangling link is a skill or file that silently disappears on every machine; it is never followed.",
    bad="skills/pdf -> ../vendor/pdf   # vendor/pdf does not exist",
    good="skills/pdf -> ../vendor/pdf   # target exists inside the repository", scope="discovery",
)
declare(
    discover_rules.SYMLINK_LOOP, "symlink-loop", "A symbolic link leads back to itself.",
    rationale="A loop would make a naive walker run forever; skillc reports it and does not follow it.",
    bad="skills/a -> b, skills/b -> a", good="skills/a -> ../shared/a", scope="discovery",
)
declare(
    discover_rules.SYMLINK_ESCAPES_REPOSITORY, "symlink-escapes-repository", "A symbolic link resolves outside the repository.",
    rationale="""
        A link out of the repository publishes whatever the builder's machine has there (home
        directories, secrets). skillc never follows it; vendor the files instead.
    """,
    bad="skills/pdf -> /home/me/skills/pdf", good="skills/pdf/ (a real directory, committed)", scope="discovery",
)
declare(
    discover_rules.UNREADABLE_PATH, "unreadable-path", "A file or directory cannot be read.",
    rationale="Permissions or I/O errors hide skills; the run goes on with the rest and the exit code says so.",
    bad="chmod 000 skills/pdf", good="chmod 755 skills/pdf", scope="discovery",
)
declare(
    discover_rules.SYMLINK_ALIAS, "symlink-alias", "A symbolic link inside the repository is an alias of another skill or folder.",
    rationale="""
        Repositories mirror skills for several agents through links (`.gemini/skills -> ../skills`).
        skillc lints and publishes the target once and records the alias, instead of reporting
        every skill twice.
    """,
    bad="(informational)", good="(informational)", scope="discovery",
)
