"""``skillc pack``, ``skillc export`` and ``skillc import``: skills as zip archives.

Secrets policy (decided for issue 3): ``pack`` and ``export`` never write a file in which the secret
scanner finds a likely credential.  There is no ``--allow-secrets`` flag: a false positive is
silenced the same way as in ``skillc lint``, in the reviewed configuration (``[lint] ignore =
["B707"]`` or ``secret-scan = false``), so the exception is visible in the repository.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.parse
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

import click

from ..archive import (
    JUNK_PREFIXES,
    ArchiveError,
    check_entry_name,
    check_git_layout,
    check_names,
    check_zip,
    excluded,
    extract_zip,
    skill_members,
    skipped_below,
    source_date_epoch,
    write_zip,
)
from ..build.output import MoveInError, OutputLock, clean_stale, move_in, staging_folder
from ..config.files import anchored, find_lint_config, lint_config, read_config_file
from ..errors import SkillcError
from ..exports import Target
from ..jsonio import load_json
from ..model import Diagnostic, ItemKind, Severity
from ..resolve.precedence import id_problem
from ..resolve_types import Repository, SourceSkill, Tier
from ..secrets import SECRET_RULE
from ..validate.lint import LintConfig, lint_root
from ..validate.report import shell_word, shown, shown_payload
from ..validate.rules.loader import load_all
from ..validate.rules.registry import PROFILES

IMPORT_PROFILE = "recommended"  # the profile `skillc import` lints with by default


def _lint_config(config_path: str | None, root: Path, profile: str | None = None) -> LintConfig:
    """The ``[lint]`` configuration for the files under ``root``: ``--config``, else the file
    ``skillc lint root`` finds (in ``root`` or above it, up to the repository's top), anchored at
    ``root`` as lint anchors it (its per-path globs are relative to the file's folder)."""
    cfg_file = read_config_file(Path(config_path)) if config_path else find_lint_config(root)
    overrides = {"profile": profile} if profile else {}
    return anchored(lint_config(cfg_file, **overrides), root)


def _secrets_on(cfg: LintConfig) -> bool:
    rules = load_all()
    rule = rules.get(SECRET_RULE)
    if not cfg.settings.secret_scan:
        return False
    return rule is None or not any(c and SECRET_RULE.startswith(c) for c in cfg.ignore)


class Leak(NamedTuple):
    """A likely secret in a file about to be archived: where and what kind, never the value."""

    name: str  # the archive name
    line: int
    column: int
    kind: str

    def __str__(self) -> str:
        return f"{self.name}:{self.line}:{self.column}: possible {self.kind} (value not shown)"


def secret_findings(members: Iterable[tuple[str, str]], cfg: LintConfig, root: Path | None) -> list[Leak]:
    """Every likely secret in the files about to be archived.

    ``root``: the folder ``cfg`` is anchored at; a file's per-path ignores are looked up by its path
    from there, as ``skillc lint root`` does (None: the files are not in a linted tree, e.g. a
    bundle's archives, and only the global ignores apply)."""
    if not _secrets_on(cfg):
        return []
    from ..secrets import scan_bytes

    out = []
    for name, source in members:
        if root is not None and cfg.ignored_at(SECRET_RULE, Path(os.path.relpath(source, root)).as_posix()):
            continue
        try:
            raw = Path(source).read_bytes()
        except OSError:
            continue
        # every file the archive will hold, whole, binary too (scan_bytes)
        out.extend(Leak(name, m.line, m.column, m.kind) for m in scan_bytes(raw))
    return out


def check_members(members: Sequence[tuple[str, str]]) -> None:
    """SkillcError (exit 1) unless ``skillc import`` would accept every name of the archive about to
    be written, as is: pack and export never write what import refuses or would silently drop."""
    names = [n for n, _ in members]
    try:
        for name in names:
            check_entry_name(name)
            if skipped_below(name):
                raise ArchiveError(f"{name!r} is below a folder that discovery skips, and import would drop it")
            if name.startswith(JUNK_PREFIXES):  # (a skill folder named __MACOSX: Finder's junk to import)
                raise ArchiveError(f"{name!r} is below {JUNK_PREFIXES[0]}, which import drops as macOS junk")
        for folder in sorted({n.split("/", 1)[0] for n in names}):
            problem = id_problem(folder)
            if problem:
                raise ArchiveError(f"the folder {folder!r} is not a safe skill name: {problem}")
        check_names(names, "the archive")
        check_git_layout(names, "the archive")
    except ArchiveError as exc:
        raise SkillcError(f"not written: {exc} (`skillc import` and other tools would refuse it)",
                          hint="rename the file or folder", exit_code=1) from None


def _print_diags(diags: Sequence[Diagnostic], prefix: str = "") -> None:
    for d in diags:
        click.echo(f"{shown(prefix + d.path)}:{d.line}:{d.column}: {d.code} [{d.severity.value}] {shown(d.message)}",
                   err=True)


def _emit(as_json: bool, payload: dict, text: str) -> None:
    """Print the result: archive members' names, skill IDs and paths come from archives and
    folders anyone can name, so they are redacted and escaped as messages are."""
    if as_json:
        click.echo(json.dumps(shown_payload(payload), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(shown(text, lines=True))


def _write_archive(members: Sequence[tuple[str, str]], dest: Path) -> list[str]:
    """``write_zip`` for ``-o``: a folder on the way that is a file, or that cannot be written (the
    environment, not a bug) is one line naming the archive, exit 1, as a build's output folder is."""
    from ..gate import redacted_members

    try:
        with tempfile.TemporaryDirectory(prefix="skillc-gate-") as tmp:
            # (the publishing gate: a value assigned to a credential's name that lint takes for a
            # stand-in is not archived either; each redaction is printed, never the value)
            members, redactions = redacted_members(members, Path(tmp))
            for line in redactions:
                click.echo(f"redacted: {shown(line)}", err=True)
            return write_zip(members, dest, source_date_epoch())
    except OSError as exc:
        # (mkdir says "File exists" or "Not a directory" for a file where a folder should be: name it)
        blocker = next((d for d in reversed(dest.parents) if d.exists() and not d.is_dir()), None)
        problem = f"{blocker} is not a folder" if blocker is not None else exc.strerror or str(exc)
        raise SkillcError(f"cannot write {dest}: {problem}", exit_code=1,
                          hint="choose an -o/--output in a folder you can write") from None


def _skill_of_dir(skill_dir: Path, cfg: LintConfig) -> SourceSkill:
    from ..resolve_types import SourceInput
    from ..sources.filesystem import list_directory

    repo = Repository("pack", "filesystem", str(skill_dir), Tier.PROJECT, Tier.PROJECT.default_priority)
    listing = list_directory(repo, skill_dir, None, cfg, SourceInput("pack", "filesystem", str(skill_dir)))
    # The skill whose SKILL.md is directly in skill_dir (its ID is the folder's name): in a folder of
    # skills, a skill one level down has a one-segment ID too, and was packed in the folder's place.
    top = [s for s in listing.skills if "/" not in s.document.path]
    if not top:
        raise SkillcError(f"{skill_dir}: no SKILL.md directly inside; pack takes one skill folder",
                          hint="to archive several skills use `skillc export DIR ID… -o FILE.zip`")
    return top[0]


# ---------------------------------------------------------------- pack

@click.command("pack")
@click.argument("skill_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Zip file to write (default: ./<skill-folder>.zip).")
@click.option("--profile", type=click.Choice(PROFILES), default="claude", show_default=True,
              help="Lint profile the skill must pass before it is packed.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="skills.toml / pyproject.toml to read [lint] from (default: found in SKILL_DIR or above it).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def pack(skill_dir: Path, output: Path | None, profile: str, config_path: str | None, as_json: bool) -> None:
    """Pack one skill folder into a zip that Claude.ai and the Claude API accept.

    The archive holds exactly one top-level folder named after the skill folder, with SKILL.md
    directly inside; __pycache__/, node_modules/, *.pyc, .DS_Store and a root evals/ folder are
    left out (as Anthropic's package_skill.py does), and so are credential files (.env, .netrc,
    id_rsa, *.pem, *.key…), which a bundle never publishes either. Entries are sorted and
    timestamped with SOURCE_DATE_EPOCH (or 1980-01-01): the same folder always gives the same
    bytes; a file over 1 MiB that would deflate more than 200x is stored (import's zip-bomb check).

    The skill is linted first (default profile: claude, plus the secret scan B707, and the errors of
    import's default profile, recommended): an error, or a likely credential in any file, refuses
    the pack (exit 1). There is no override flag; silence a
    false positive in the reviewed configuration ([lint] ignore = ["B707"]).
    """
    skill_dir = skill_dir.resolve()
    cfg = _lint_config(config_path, skill_dir, profile)
    from dataclasses import replace

    cfg = replace(cfg, extend_select=tuple(cfg.extend_select) + (SECRET_RULE,))
    skill = _skill_of_dir(skill_dir, cfg)
    # The whole folder, as `skillc lint SKILL_DIR` sees it (a broken file or link below it is an error
    # too), but for the nested skills, which the archive leaves out.
    result = lint_root(skill_dir, cfg)
    nested = sorted(it.skill_dir for it in result.discovery.items if it.skill_dir and it.kind is ItemKind.SKILL)
    packed = [d for d in result.diagnostics if not any(d.path.startswith(n + "/") for n in nested)]
    errors = [d for d in packed if d.severity is Severity.ERROR]
    warnings = [d for d in packed if d.severity is Severity.WARNING]
    shown_profile = cfg.profile
    if cfg.profile != IMPORT_PROFILE:
        # `skillc import` lints with its own default profile: an error only that profile raises
        # (`license: 3`, `allowed-tools: 42` pass --profile claude) would make it refuse the archive
        # pack writes, and pack never writes what import refuses.
        seen = {(d.path, d.line, d.column, d.code) for d in errors}
        imported = lint_root(skill_dir, replace(cfg, profile=IMPORT_PROFILE))
        import_only = [d for d in imported.diagnostics if d.severity is Severity.ERROR
                       and (d.path, d.line, d.column, d.code) not in seen
                       and not any(d.path.startswith(n + "/") for n in nested)]
        errors += import_only
        if import_only:
            shown_profile = IMPORT_PROFILE  # (the profile whose lint shows them)
    members = skill_members(skill)
    # (a secret lint already reported is not listed twice)
    reported = {(d.path, d.line) for d in errors if d.code == SECRET_RULE}
    leaks = [leak for leak in secret_findings(members, cfg, skill_dir)
             if (leak.name.split("/", 1)[1], leak.line) not in reported]
    if errors or leaks:
        _print_diags(errors, f"{skill_dir.name}/")
        for leak in leaks:
            click.echo(shown(str(leak)), err=True)
        counts = [f"{n} {what}" for n, what in ((len(errors), "lint error(s)"), (len(leaks), "likely secret(s)")) if n]
        why = f" ({IMPORT_PROFILE} profile: `skillc import` would refuse the archive)" if shown_profile != cfg.profile else ""
        raise SkillcError(f"{skill_dir.name}: not packed: {', '.join(counts)}{why}",
                          hint=f"fix them and run again (`skillc lint --profile {shown_profile} {shell_word(str(skill_dir))}` "
                               "shows the details)", exit_code=1)
    if warnings and not as_json:
        _print_diags(warnings, f"{skill_dir.name}/")
    dest = (output or Path.cwd() / f"{skill_dir.name}.zip").resolve()
    if dest == skill_dir or skill_dir in dest.parents:
        raise SkillcError(f"{dest}: the archive would be inside the skill folder it packs",
                          hint="write it elsewhere, e.g. -o ../" + f"{skill_dir.name}.zip")
    check_members(members)
    names = _write_archive(members, dest)
    if nested and not as_json:
        click.echo(f"note: left out {len(nested)} nested skill(s) ({', '.join(nested[:3])}"
                   f"{' …' if len(nested) > 3 else ''}): each is a skill of its own; pack it separately", err=True)
    _emit(as_json, {"archive": str(dest), "skill": skill.id, "files": names, "warnings": len(warnings),
                    "nested_skills_left_out": nested},
          f"packed {skill.id} ({len(names)} files) into {dest}")


# ---------------------------------------------------------------- export

def _bundle_api(path: Path) -> Path | None:
    for api in (path / "api", path):
        if (api / "skills.json").is_file() and (api / "manifest.json").is_file():
            return api
    return None


def _export_from_bundle(api: Path, ids: Sequence[str], tmp: Path) -> dict[str, list[tuple[str, str]]]:
    """Members per ID from a built bundle: its per-skill archive, else its wire document."""
    from ..sources.http import skill_text

    out: dict[str, list[tuple[str, str]]] = {}
    for skill_id in ids:
        problem = id_problem(skill_id)
        if problem:  # (it names a path below api/: never one that leaves it)
            raise SkillcError(f"{skill_id!r} is not a skill ID: {problem}")
        enc = urllib.parse.quote(skill_id, safe="")
        folder = skill_id.rsplit("/", 1)[-1]
        archive = api / "archives" / f"{skill_id}.zip"  # (nested by ID, as the build writes them)
        if archive.is_file():
            listing = check_zip(archive)
            dest = tmp / enc
            extract_zip(listing, dest)
            out[skill_id] = sorted(
                (f"{folder}/{e.name.split('/', 1)[1]}", str(dest / e.name)) for e in listing.entries if "/" in e.name)
            if f"{folder}/SKILL.md" not in {name for name, _ in out[skill_id]}:
                # (import drops what check_zip skips: an archive whose folder is __MACOSX/ held nothing
                # it would take, and an empty zip was written with exit 0)
                raise SkillcError(f"{archive}: holds no {folder}/SKILL.md that `skillc import` would take; not exported",
                                  exit_code=1)
            continue
        doc_file = api / "skills" / enc
        if not doc_file.is_file():
            raise SkillcError(f"skill {skill_id!r} is not in the bundle {api}")
        try:
            doc = load_json(doc_file.read_text("utf-8"))
            text = skill_text(doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise SkillcError(f"{doc_file}: not a wire skill document ({exc})") from None
        target = tmp / enc / "SKILL.md"
        target.parent.mkdir(parents=True)
        target.write_text(text, "utf-8", newline="")
        out[skill_id] = [(f"{folder}/SKILL.md", str(target))]
    return out


def _resolution_for(source: str, config_cwd: Path, cache_dir: Path, cfg: LintConfig):
    from ..config.build import load_build_config
    from ..resolve.precedence import resolve
    from ..sources import open_source

    path = Path(source)
    config_root = None
    if "://" in source:
        return resolve([_registry_listing(source, cache_dir, cfg)]), cfg, None
    elif path.is_file() and path.suffix == ".zip":
        repos = [Repository("source", "zip", str(path.resolve()), Tier.PROJECT, Tier.PROJECT.default_priority)]
    elif path.is_file():
        build = load_build_config([], str(path), cwd=config_cwd, home=Path.home(), env=os.environ)
        repos = list(build.repositories)
        folder = path.resolve().parent
        config_root = folder.parent if folder.name == ".rkat" else folder
        cfg = anchored(build.lint, config_root)
    elif path.is_dir():
        repos = [Repository("source", "filesystem", str(path.resolve()), Tier.PROJECT,
                            Tier.PROJECT.default_priority)]
    else:
        raise SkillcError(f"{source}: no such directory, file or URL")
    listings = [open_source(r, cache_dir=cache_dir, lint=cfg).skills() for r in repos]
    return resolve(listings), cfg, config_root


def _registry_listing(url: str, cache_dir: Path, cfg: LintConfig):
    """A registry's skills from its API base URL, or from the bundle's root URL (``…/api`` is tried
    first then, as ``skillc search`` and ``Bundle.open`` do)."""
    from ..sources import SourceError, open_source

    base = url.rstrip("/")
    candidates = [base] if urllib.parse.urlsplit(base).path.endswith("/api") else [base + "/api", base]
    failure: SourceError | None = None
    for candidate in candidates:
        repo = Repository("registry", "http", candidate, Tier.PROJECT, Tier.PROJECT.default_priority,
                          refresh_seconds=0)
        try:
            return open_source(repo, cache_dir=cache_dir, lint=cfg).skills()
        except SourceError as exc:
            failure = failure or exc  # (the /api attempt's message says most)
    assert failure is not None
    raise failure


class Collected(NamedTuple):
    """The skills an export takes from its SOURCE: archive members per ID (``<leaf>/<path>``, SKILL.md
    first), every ID's flat name, and the lint configuration (and its folder) the gates use."""

    per_id: dict[str, list[tuple[str, str]]]
    flat_names: dict[str, str]
    cfg: LintConfig
    root: Path | None


def _collect(source: str, ids: tuple[str, ...], tmp: Path, cache_dir: Path | None) -> Collected:
    """Gather ``ids`` (none: every skill) from a skills directory, a skills.toml, a bundle, a zip or a
    registry URL."""
    from ..flatnames import assign_flat_names

    source_dir = Path(source) if "://" not in source and Path(source).is_dir() else None
    # The source's own configuration, as `skillc lint SOURCE` finds it (a bundle, zip or URL has
    # none: the one around the current folder speaks for it).
    anchor = source_dir.resolve() if source_dir is not None else Path.cwd()
    cfg = _lint_config(None, anchor)
    api = _bundle_api(source_dir) if source_dir is not None else None
    if api is not None:
        every = _bundle_ids(api)
        chosen = list(ids) or every
        from ..emit.manifest import read_manifest_file

        manifest = read_manifest_file(api / "manifest.json") or {}
        flat = manifest.get("flat_names") if isinstance(manifest.get("flat_names"), dict) else None
        names = dict(flat) if flat and set(every) <= set(flat) else dict(assign_flat_names(every).names)
        return Collected(_export_from_bundle(api, chosen, tmp), names, cfg, None)
    root: Path | None = anchor if source_dir is not None else None
    resolution, cfg, config_root = _resolution_for(source, Path.cwd(), cache_dir or tmp / "cache", cfg)
    by_id = {s.id: s for s in resolution.skills}
    missing = [i for i in ids if i not in by_id]
    if missing:
        known = ", ".join(sorted(by_id)[:10]) + (" …" if len(by_id) > 10 else "")
        raise SkillcError(f"not found in {source}: {', '.join(missing)}", hint=f"known IDs: {known or 'none'}")
    chosen = list(ids) or list(by_id)
    return Collected({i: skill_members(by_id[i]) for i in chosen}, dict(resolution.flat_names), cfg,
                     config_root or root)


def _bundle_ids(api: Path) -> list[str]:
    try:
        listing = json.loads((api / "skills.json").read_text("utf-8"))
        return [s["id"] for s in listing["skills"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SkillcError(f"{api / 'skills.json'}: not a skills list ({exc})") from None


def _gate(members: list[tuple[str, str]], cfg: LintConfig, root: Path | None) -> None:
    """What pack checks before writing: names import takes, and no likely secret."""
    check_members(members)
    leaks = secret_findings(members, cfg, root)
    if leaks:
        for leak in leaks:
            click.echo(shown(str(leak)), err=True)
        raise SkillcError(f"not exported: {len(leaks)} likely secret(s)", exit_code=1,
                          hint="remove them, or silence a false positive with [lint] ignore = [\"B707\"]")


def _marketplace_options(name: str | None, owner: str, version: str, output: Path):
    from ..exports import MarketplaceOptions
    from ..flatnames import normalise

    opts = MarketplaceOptions(name or normalise(output.name), owner, version)
    problem = opts.problem()
    if problem:
        raise SkillcError(f"--target marketplace: {problem}", hint="name the marketplace with --name NAME")
    return opts


@click.command("export")
@click.argument("source")
@click.argument("ids", nargs=-1)
@click.option("--target", "target_name", type=click.Choice([t.value for t in Target]), default="claude", show_default=True,
              help="What to write (see below).")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="The zip (claude, skill) or the new folder (the other targets) to write.")
@click.option("--git", "as_git", is_flag=True, help="skills-folder: commit the folder as a git repository.")
@click.option("--name", "market_name", help="marketplace: its name (default: OUT's folder name, kebab-case).")
@click.option("--owner", default="skillc", show_default=True, help="marketplace: the owner and plugin author.")
@click.option("--plugin-version", default="1.0.0", show_default=True,
              help="marketplace: the version of the marketplace and of each plugin.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where git/zip/http sources are fetched (default: a temporary directory).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def export(source: str, ids: tuple[str, ...], target_name: str, output: Path, as_git: bool, market_name: str | None,
           owner: str, plugin_version: str, cache_dir: Path | None, as_json: bool) -> None:
    """Export skills by ID (none: every skill) from SOURCE for the client that installs them.

    SOURCE is a skills directory, a skills.toml (all its repositories, with precedence), a built
    bundle directory (its per-skill archives), a .zip, or the URL of a registry speaking the
    Meerkat Skills API (e.g. http://127.0.0.1:8000/api). IDs are canonical IDs
    (extraction/email-extractor).

    \b
    Targets (docs/guides/clients.md gives the command that consumes each):
      claude         one zip, a folder per skill named after its last segment (Claude.ai, the API)
      skill          the same archive, to be named NAME.skill (Anthropic's package_skill.py)
      skills-folder  skills/<flat name>/… (npx skills add, openskills install); --git commits it
      marketplace    a Claude Code plugin marketplace, one plugin per skill (claude plugin validate)
      well-known     the discovery tree alone (.well-known/), for a static host
      shared-folder  seed 002's Skills/ folder with its skills.md

    Claude.ai accepts exactly one skill (one top-level folder) per zip: export one ID for an
    upload. Folder targets write a new folder (OUT must not exist, or be empty), all or nothing.
    Every target is deterministic (SOURCE_DATE_EPOCH dates the zips and the commit), and files
    holding likely secrets refuse the export (exit 1), as pack does.
    """
    target = Target(target_name)
    if as_git and target is not Target.SKILLS_FOLDER:
        raise SkillcError("--git goes with --target skills-folder")
    if target is not Target.MARKETPLACE and (market_name is not None or owner != "skillc"
                                             or plugin_version != "1.0.0"):
        raise SkillcError("--name, --owner and --plugin-version go with --target marketplace")
    market = _marketplace_options(market_name, owner, plugin_version, output) if target is Target.MARKETPLACE else None
    # An ID given twice (or as `a/b` and `a/b/`) is one skill, exported once: not two folders that clash.
    ids = tuple(dict.fromkeys(i.strip("/") for i in ids))
    for skill_id in ids:
        problem = id_problem(skill_id)
        if problem:  # (it names a path below the source: never one that leaves it)
            raise SkillcError(f"{skill_id!r} is not a skill ID: {problem}")
    with tempfile.TemporaryDirectory(prefix="skillc-export-") as tmp_name:
        got = _collect(source, ids, Path(tmp_name), cache_dir)
        if target.is_zip:
            _export_zip(got, output, as_json)
        else:
            _export_folder(got, target, output, as_git, market, as_json)


def _export_zip(got: Collected, output: Path, as_json: bool) -> None:
    folders: dict[str, str] = {}
    for skill_id in got.per_id:
        folder = skill_id.rsplit("/", 1)[-1]
        if folder in folders:
            raise SkillcError(f"{folders[folder]!r} and {skill_id!r} would both be the folder {folder!r}; "
                              "export them into separate archives")
        folders[folder] = skill_id
    members = [m for ms in got.per_id.values() for m in ms if not excluded(m[0].split("/", 1)[1])]
    _gate(members, got.cfg, got.root)
    names = _write_archive(members, output)
    if len(got.per_id) > 1 and not as_json:
        click.echo(f"note: {output.name} holds {len(got.per_id)} top-level folders; Claude.ai accepts one skill per "
                   "zip (export a single ID, or use `skillc pack`, for an upload)", err=True)
    _emit(as_json, {"archive": str(output), "skills": sorted(got.per_id), "files": names},
          f"exported {len(got.per_id)} skill(s) ({len(names)} files) into {output}")


def _export_folder(got: Collected, target, output: Path, as_git: bool, market, as_json: bool) -> None:
    from .. import exports
    from ..gate import redacted_members

    with tempfile.TemporaryDirectory(prefix="skillc-gate-") as tmp:
        per_id = {i: [(n, src) for n, src in ms if not excluded(n.split("/", 1)[1])]
                  for i, ms in sorted(got.per_id.items(), key=lambda kv: kv[0].encode())}
        _gate([m for ms in per_id.values() for m in ms], got.cfg, got.root)
        skills = []
        for i, kept in per_id.items():
            # (the publishing gate, as pack's: what only the strict reading finds is redacted, and said)
            kept, redactions = redacted_members(kept, Path(tmp))
            for line in redactions:
                click.echo(f"redacted: {shown(line)}", err=True)
            skills.append(exports.export_skill(i, got.flat_names[i], [(n.split("/", 1)[1], src) for n, src in kept]))
        _write_export_folder(skills, target, output, as_git, market, as_json)


def _write_export_folder(skills, target, output: Path, as_git: bool, market, as_json: bool) -> None:
    from .. import exports

    epoch = source_date_epoch()
    fills = {
        Target.SKILLS_FOLDER: lambda: exports.fill_skills_folder(skills),
        Target.MARKETPLACE: lambda: exports.fill_marketplace(skills, market),
        Target.WELL_KNOWN: lambda: exports.fill_well_known(skills, epoch),
        Target.SHARED_FOLDER: lambda: exports.fill_shared_folder(skills),
    }
    commit: list[str] = []
    fill = exports.committed(fills[target](), epoch, commit) if as_git else fills[target]()
    names = exports.write_folder(output, fill)
    if target is not Target.WELL_KNOWN and not as_json:
        for name, shared in exports.shared_names(skills).items():
            click.echo(f"warning: {', '.join(shared)} all have the frontmatter name {name!r}: `npx skills add` "
                       "installs a folder's skills by that name, so only one of them would stay "
                       "(their folders here are their flat names; openskills and plugins use those)", err=True)
    payload = {"folder": str(output), "target": target.value, "skills": [s.id for s in skills],
               "flat_names": {s.id: s.flat_name for s in skills}, "files": names}
    if commit:
        payload["commit"] = commit[0]
    _emit(as_json, payload, f"exported {len(skills)} skill(s) ({len(names)} files) as {target.value} into {output}"
          + (f" (git commit {commit[0][:12]})" if commit else ""))


# ---------------------------------------------------------------- import

def _layout(listing) -> list[str]:
    """The skill folders of an archive; ArchiveError unless each top-level folder has SKILL.md directly inside."""
    from ..resolve.precedence import id_problem

    loose = sorted(e.name for e in listing.entries if "/" not in e.name)
    if loose:
        raise ArchiveError(f"{listing.path}: files at the archive root ({', '.join(loose[:3])}); a skill zip holds "
                           "one folder per skill with SKILL.md directly inside")
    folders = listing.top_level()
    if not folders:
        raise ArchiveError(f"{listing.path}: the archive holds no files")
    names = {e.name for e in listing.entries}
    for folder in folders:
        if f"{folder}/SKILL.md" not in names:
            deeper = sorted(n for n in names if n.startswith(f"{folder}/") and n.rsplit("/", 1)[-1].lower() == "skill.md")
            where = f" (found at {deeper[0]})" if deeper else ""
            raise ArchiveError(f"{listing.path}: SKILL.md must sit directly inside the top-level folder "
                               f"{folder!r}{where}")
        problem = id_problem(folder)
        if problem:
            raise ArchiveError(f"{listing.path}: folder {folder!r} is not a safe skill name: {problem}")
    return folders


@click.command("import")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--into", "into", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Skills directory to add the skill folders to (created if missing).")
@click.option("--force", is_flag=True, help="Replace skill folders that already exist in DIR.")
@click.option("--profile", type=click.Choice(PROFILES), default=IMPORT_PROFILE, show_default=True,
              help="Lint profile the imported skills must pass.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True),
              help="skills.toml / pyproject.toml to read [lint] from.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def import_(archive: Path, into: Path, force: bool, profile: str, config_path: str | None, as_json: bool) -> None:
    """Import the skills of a zip archive into DIR, safely.

    The archive is checked before anything is written: no absolute paths, no '..', no symbolic
    links, no encrypted entries, size and compression-ratio caps (zip bombs), and each top-level
    folder must hold SKILL.md directly (the layout Claude-style uploaders use; several folders are
    several skills). The skills are extracted into a staging folder inside DIR and linted; lint
    errors refuse the import (exit 1). Each folder then replaces its target in one rename, so a
    failed import leaves DIR as it was. Existing folders are kept unless --force.
    """
    listing = check_zip(archive)
    folders = _layout(listing)
    clashes = [f for f in folders if (into / f).exists() or (into / f).is_symlink()]
    if clashes and not force:
        raise SkillcError(f"{', '.join(clashes)} already exist(s) in {into}; nothing was imported",
                          hint="use --force to replace them")
    created = not into.exists()
    try:
        into.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SkillcError(f"cannot create {into}: {exc.strerror or exc}") from None
    try:
        cfg = _lint_config(config_path, into.resolve(), profile)
        with _ImportLock(into) as work:
            warnings = _stage_and_swap(archive, listing, folders, into, work, cfg)
    except BaseException:
        if created:  # (DIR did not exist before: removed if it is still empty; another import may use it)
            from ..layout import WORK_DIR

            for folder in (into / WORK_DIR, into):
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    continue
                except OSError:
                    break
        raise
    if warnings and not as_json:
        _print_diags(warnings)
    if listing.skipped and not as_json:
        skipped = ", ".join(listing.skipped[:5]) + (" …" if len(listing.skipped) > 5 else "")
        click.echo(shown(f"skipped {len(listing.skipped)} entr{'y' if len(listing.skipped) == 1 else 'ies'} "
                         f"(macOS junk, VCS and build folders): {skipped}"), err=True)
    _emit(as_json, {"archive": str(archive), "into": str(into), "skills": folders,
                    "files": len(listing.entries), "replaced": clashes, "warnings": len(warnings),
                    "skipped": list(listing.skipped)},
          f"imported {len(folders)} skill(s) into {into}: {', '.join(folders)}")


class _ImportLock:
    """One import at a time into DIR (``flock`` on the folder itself: nothing is left behind), with
    its staging folder in ``DIR/.skillc-build/`` (on DIR's file system, so each skill moves in with
    one rename, and in a folder discovery skips, so an import that was killed is never linted or
    built).  Leftovers of killed imports are removed first; the work folder goes when it is empty."""

    def __init__(self, into: Path) -> None:
        from ..layout import WORK_DIR

        self.into, self.work = into, into / WORK_DIR
        self.lock = OutputLock(into, _import_busy, folder=True)

    def __enter__(self) -> Path:
        if self.work.is_symlink() or (self.work.exists() and not self.work.is_dir()):
            # (a link there, which a cloned repository can hold, would stage the skills where it points,
            # outside DIR, and clean_stale would empty that folder's import.tmp-* folders)
            kind = "a symbolic link" if self.work.is_symlink() else "a file"
            raise SkillcError(f"{self.work} is {kind}, where import stages the skills it extracts (never "
                              f"outside {self.into})", exit_code=1, hint="remove it and run again")
        self.lock.__enter__()
        clean_stale(self.work, "import")
        self.work.mkdir(exist_ok=True)
        return self.work

    def __exit__(self, *exc: object) -> None:
        try:
            self.work.rmdir()
        except OSError:
            pass  # (a build's output beside it, or not empty)
        self.lock.__exit__(*exc)


def _import_busy(holder: str, into: Path) -> SkillcError:
    return SkillcError(f"another skillc import is writing into {into}", exit_code=1,
                       hint="wait for it to finish and run this one again")


def _stage_and_swap(archive: Path, listing, folders: list[str], into: Path, work: Path,
                    cfg: LintConfig) -> list[Diagnostic]:
    """Extract and lint in a staging folder, then move each skill folder in; returns the warnings.
    A folder that cannot be moved in puts back every one moved before it: DIR is left as it was."""
    with staging_folder(work, "import") as staging:
        extract_zip(listing, staging / "skills")
        result = lint_root(staging / "skills", cfg)
        errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
        if errors:
            _print_diags(errors)
            raise SkillcError(f"{archive.name}: not imported: {len(errors)} lint error(s)", exit_code=1,
                              hint="fix the skill and pack it again, or choose another --profile")
        from ..parallel import signals_deferred

        # Ctrl-C or SIGTERM waits for the renames (all done, or all undone): never half a DIR.
        with signals_deferred():
            _swap(folders, into, staging)
        return [d for d in result.diagnostics if d.severity is Severity.WARNING]


def _swap(folders: list[str], into: Path, staging: Path) -> None:
    """Move each staged skill folder into ``into``; a failure is a SkillcError saying where DIR stands."""
    try:
        move_in(folders, into, staging, staging / "skills")
    except MoveInError as failed:
        exc = failed.exc
        if failed.kept is not None:
            raise SkillcError(f"not imported: cannot move {exc.filename!r} into place ({exc.strerror or exc}), "
                              f"nor put back {', '.join(failed.stranded)}: the previous folders are in "
                              f"{failed.kept}", exit_code=1) from None
        raise SkillcError(f"not imported: cannot move {exc.filename!r} into place "
                          f"({exc.strerror or exc}); {into} is as it was", exit_code=1) from None


__all__ = ["export", "import_", "pack"]
