"""``skillc new ID``: create ``ID/SKILL.md`` from ``templates/new-skill/SKILL.md.j2``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..discover.walk import RESOURCE_DIRS, SKILL_FILE_NAMES, SKIP_DIRS
from ..errors import SkillcError
from ..model import NAME_RE
from ..resolve.precedence import id_problem

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # (how Python holds an argument's bytes that are not UTF-8)


def render(name: str, description: str) -> str:
    """The template filled in: ``name`` as it is (written as YAML reads it back), ``description``
    already a YAML scalar."""
    from ..resources import template_dir, template_environment

    env = template_environment(template_dir() / "new-skill", keep_trailing_newline=True)
    title = name.replace("-", " ").capitalize()
    return env.get_template("SKILL.md.j2").render(name=_yaml_name(name), description=description, title=title)


def _quote(text: str) -> str:
    """A YAML single-quoted scalar (always safe, whatever the text holds)."""
    return "'" + text.replace("'", "''") + "'"


def _yaml_name(name: str) -> str:
    """``name`` as a YAML value that reads back as that string: plain when it does, else quoted.
    A valid name may still be read as another type (YAML 1.1, as lint reads it: `123`, `0x1f`
    and `017` are integers, `yes`/`off` booleans, `null` nothing, `2024-01-01` a date), and the
    spec needs a string (S302)."""
    import yaml

    try:
        plain = yaml.safe_load(f"name: {name}\n")
    except yaml.YAMLError:
        plain = None
    return name if isinstance(plain, dict) and plain.get("name") == name else _quote(name)


@click.command("new")
@click.argument("skill_id", metavar="ID")  # (the name the help and the errors use)
@click.option("--description", "-d", default=None,
              help="The skill's description (default: a placeholder to replace).")
def new(skill_id: str, description: str | None) -> None:
    """Create a new skill: ID/SKILL.md from the project template.

    ID is the skill's folder, e.g. `skills/data/csv-cleanup`; its last segment becomes the `name`
    and must be 1-64 characters of a-z, 0-9 and single hyphens. An existing SKILL.md is never
    overwritten. Check the result with `skillc lint ID`.
    """
    parts = [p for p in skill_id.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise click.BadParameter(f"{skill_id!r} is not a folder path for a skill", param_hint="ID")
    name = parts[-1]
    if len(name) > 64 or not NAME_RE.match(name):
        raise SkillcError(f"invalid skill name {name!r}: use 1-64 characters of a-z, 0-9 and single hyphens, "
                          "not starting or ending with a hyphen",
                          hint="e.g. `skillc new skills/data/csv-cleanup`")
    problem = id_problem(name)
    if problem:  # (a reserved Windows device name: build and import refuse it)
        raise SkillcError(f"invalid skill name {name!r}: {problem}", hint="choose another name")
    folder = Path(*parts) if not os.path.isabs(skill_id) else Path(skill_id)
    target = folder / "SKILL.md"
    existing = [p for p in (folder.iterdir() if folder.is_dir() else []) if p.name.lower() == "skill.md"]
    if existing:
        raise SkillcError(f"{existing[0]} already exists; not overwriting it", exit_code=1)
    text = f"Say what {name} does and when to use it. Use when the user asks for it." if description is None \
        else description
    if not 1 <= len(text) <= 1024 or not text.strip():  # (blank is S310 for the spec, and tells agents nothing)
        raise SkillcError("the description must be 1-1,024 characters, not all blank")
    if _SURROGATE.search(text):  # (before anything is made: the write failed half-way, leaving an empty SKILL.md)
        raise SkillcError("the description is not UTF-8 text (an argument holds bytes that are not UTF-8)",
                          hint="pass it in UTF-8; a SKILL.md is UTF-8")
    bad = _CONTROL.search(text)
    if bad:  # (a line break would be folded, or end the frontmatter at a `---` line; P214 rejects the rest)
        raise SkillcError(f"the description must be one line of text: it holds {bad.group()!r}",
                          hint="write it on one line; it is what agents read to decide when to use the skill")
    content = render(name, _quote(text))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8", newline="\n") as fh:  # "x": never overwrite, even racing
            fh.write(content)
    except FileExistsError:
        if folder.is_dir():
            raise SkillcError(f"{target} already exists; not overwriting it", exit_code=1) from None
        raise SkillcError(f"cannot create {folder}: a file is in the way") from None
    except OSError as exc:
        raise SkillcError(f"cannot create {target}: {exc.strerror or exc}") from None
    click.echo(f"created {target.as_posix()}")
    hidden = _hidden_by(folder, parts)
    if hidden:
        click.echo(f"note: {hidden}, so linting or building the repository will not see this skill", err=True)
    from ..validate.report import shell_word

    click.echo(f"next: edit the description and steps, then run `skillc lint {shell_word(folder.as_posix())}`")


def _hidden_by(folder: Path, parts: list[str]) -> str | None:
    """Why discovery would not find a skill in ``folder`` (``parts``: its path segments), or None."""
    skipped = [p for p in parts if p in SKIP_DIRS]
    if skipped:
        return f"discovery skips {skipped[0]}/ folders"
    base = len(folder.parts) - len(parts)
    for i in range(len(parts)):  # (the skill is written at the link's target, where discovery never goes)
        step = Path(*folder.parts[: base + i + 1])
        if step.is_symlink():
            return f"{step.as_posix()} is a symbolic link, which discovery does not follow"
    for i, part in enumerate(parts[:-1]):
        if part in RESOURCE_DIRS and i > 0:
            owner = Path(*folder.parts[: len(folder.parts) - len(parts) + i])
            if any((owner / n).is_file() for n in SKILL_FILE_NAMES):
                return (f"{owner.as_posix()} is a skill, and a SKILL.md in its {part}/ folder is a resource "
                        "(a fixture or template), not a skill")
    return None


__all__ = ["new", "render"]
