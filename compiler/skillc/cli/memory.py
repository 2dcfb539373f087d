"""``skillc memory``: import, freeze, search, show, extract."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

import click

from ..errors import SkillcError
from ..index import reads_bundle

CATEGORY_CHOICES = click.Choice(["preference", "convention", "pattern", "correction", "fact"])
TYPE_CHOICES = click.Choice(["semantic", "episodic", "procedural"])


MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024


def _print_problems(problems) -> None:
    from ..validate.report import one_line

    # (as the error line after them: a file name's escape sequence or undecodable byte shown as \xNN)
    for p in problems:
        click.echo(one_line(str(p)), err=True)


def _write_output(path: Path, text: str, force: bool) -> None:
    """Write ``--into`` whole or not at all (a temporary sibling renamed over it), never through a
    symbolic link (one that dangles would write wherever it points)."""
    if path.is_symlink():
        raise SkillcError(f"{path} is a symbolic link; --into writes only a plain file",
                          hint="give the file the link points to, or another --into file")
    if path.exists() and not force:
        raise SkillcError(f"{path} exists", hint="pass --force to overwrite it, or choose another --into file")
    if path.exists() and path.is_dir():
        raise SkillcError(f"{path} is a folder; --into takes a file (memory/NAME.yaml or .jsonl)")
    try:
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except UnicodeEncodeError as exc:
        raise SkillcError(f"{path}: not written: the memories hold text that is not Unicode ({exc.reason})") from None
    except OSError as exc:
        raise SkillcError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _check_into(into: str) -> Path:
    path = Path(into)
    if not path.name.endswith((".yaml", ".yml", ".jsonl")):
        raise click.BadParameter("must end with .yaml, .yml or .jsonl", param_hint="--into")
    return path


@click.group("memory")
def memory() -> None:
    """Memories as code: import them from agent stores, review them in git, freeze them into a bundle.

    Memory files are YAML (a list of entries, or one entry per document) or JSONL (one entry per
    line) in a repository's memory/ folder; `schemas/memory.schema.json` describes an entry.
    """


@memory.command("import")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--into", "into", required=True, help="Memory file to write (memory/NAME.yaml or .jsonl).")
@click.option("--from", "fmt", type=click.Choice(["plan-cascade", "talkcody", "skill-memory", "letta", "mem0"]),
              help="Source format (default: detected from the file).")
@click.option("--force", is_flag=True, help="Overwrite the --into file if it exists.")
@click.option("--keep-going", is_flag=True,
              help="Write the good rows even when some cannot be imported or had values capped or stripped.")
@click.option("--fail-on-secret", is_flag=True, help="Exit 1 (and write nothing) when a memory holds a likely secret.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def import_(source: Path, into: str, fmt: str | None, force: bool, keep_going: bool, fail_on_secret: bool,
            as_json: bool) -> None:
    """Import memories from SOURCE into a memory file for review.

    SOURCE is a Plan Cascade SQLite database (project_memories, episodic_records, skill_library), a
    TalkCody SQLite database (memories), a seed 003 skill_memory database, a Letta agent file (.af)
    or Mem0 get_all JSON. Secrets are redacted before anything is written; rows that cannot become
    entries are listed. Exit 1 when the source lacks the expected tables or columns.
    """
    from ..memory.importers import import_source
    from ..memory.load import dump_entries
    from ..memory.model import iso
    from ..memory.pipeline import SecretsFound, default_as_of
    from ..memory.redact import redact_entries

    path = _check_into(into)
    result = import_source(source, fmt, default_time=iso(default_as_of()))
    level = "warning" if keep_going else "error"
    for line in result.skipped:
        click.echo(f"{source}: {level}: cannot import {line}", err=True)
    for line in result.repaired:
        click.echo(f"{source}: {level}: {line}", err=True)
    if (result.skipped or result.repaired) and not keep_going:
        raise SkillcError(f"{source}: {len(result.skipped)} row(s) cannot be imported, {len(result.repaired)} value(s) "
                          "would be capped or stripped; nothing written", exit_code=1,
                          hint="pass --keep-going to import the rest")
    entries, audit = redact_entries(result.entries)
    if fail_on_secret and audit:
        raise SecretsFound(sum(r.count for r in audit), len({r.entry for r in audit}))
    _write_output(path, dump_entries(entries, path.name), force)
    for r in audit:
        click.echo(f"redacted: entry {r.entry} {r.field}: {r.count} × {r.kind}", err=True)
    if as_json:
        click.echo(json.dumps({"format": result.format, "entries": len(entries), "skipped": list(result.skipped),
                               "repaired": list(result.repaired), "redactions": [r.to_json() for r in audit], "into": str(path)}, ensure_ascii=False))
    else:
        click.echo(f"imported {len(entries)} memor{'y' if len(entries) == 1 else 'ies'} from {source} "
                   f"({result.format}) into {path}")


@memory.command("freeze")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write snapshot.json, snapshot.sqlite, prompt.md and skills/ into.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Read [memory] settings from this skills.toml / pyproject.toml (default: found in the current folder).")
@click.option("--skills", "skills_root", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Skill repository: write a <skill-memory> block for each skill that opts in.")
@click.option("--as-of", help="Decay as of this time (default: SOURCE_DATE_EPOCH, else now).")
@click.option("--min-importance", type=click.FloatRange(0, 1), help="Override retention.minImportance.")
@click.option("--max-per-namespace", type=click.IntRange(0), help="Override retention.maxMemoriesPerNamespace (0: no limit).")
@click.option("--keep-going", is_flag=True, help="Skip malformed entries and repair oversized or control-character values.")
@click.option("--fail-on-secret", is_flag=True, help="Exit 1 (and write nothing) when a memory holds a likely secret.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def freeze(paths, out, config_path, skills_root, as_of, min_importance, max_per_namespace, keep_going,
           fail_on_secret, as_json) -> None:
    """Consolidate memory files (PATH…, default ./memory) into a frozen snapshot in --out.

    Exact duplicates and near-duplicates (TF-IDF cosine > 0.90) are merged with the originals kept
    in merged_from; superseded entries are marked; importance decays as of --as-of; entries below
    retention.minImportance or beyond retention.maxMemoriesPerNamespace are listed in `pruned` with
    the reason; secrets are redacted and audited. Every problem is printed with file and line.
    """
    from ..config.files import find_config, read_config_file
    from ..memory.pipeline import MemoryInputError, opted_in_skills, parse_as_of
    from ..memory.pipeline import freeze as run_freeze
    from ..memory.settings import settings_from_config, with_overrides

    if not paths:
        if not Path("memory").is_dir():
            raise click.UsageError("no PATH given and no ./memory folder")
        paths = (Path("memory"),)
    cfg = read_config_file(config_path) if config_path else find_config(Path("."))
    settings = with_overrides(settings_from_config(cfg), min_importance=min_importance,
                              max_memories_per_namespace=max_per_namespace)
    skills = opted_in_skills(skills_root) if skills_root else []
    try:
        report = run_freeze(list(paths), out, settings=settings, as_of=parse_as_of(as_of), keep_going=keep_going,
                            skills=skills, fail_on_secret=fail_on_secret)
    except MemoryInputError as exc:
        _print_problems(exc.problems)
        raise
    except OSError as exc:  # (--out under a file, a full disk: the environment, as for a build's output, exit 1)
        blocker = next((d for d in reversed((out / "x").parents) if d.exists() and not d.is_dir()), None)
        problem = f"{blocker} is not a folder" if blocker is not None else exc.strerror or str(exc)
        raise SkillcError(f"cannot write the snapshot into {out}: {problem}", exit_code=1,
                          hint="choose an --out folder you can write") from None
    _print_problems(report.problems)
    for w in report.snapshot.doc["warnings"]:
        click.echo(f"warning: {w}", err=True)
    for r in report.snapshot.redactions:
        click.echo(f"redacted: entry {r.entry} {r.field}: {r.count} × {r.kind}", err=True)
    counts = report.snapshot.doc["counts"]
    if as_json:
        click.echo(json.dumps({"out": str(out), "files": list(report.written), "counts": counts}, ensure_ascii=False,
                              sort_keys=True))
    else:
        click.echo(f"froze {counts['kept']} memories into {out} ({counts['pruned']} pruned, "
                   f"{counts.get('duplicates', 0)} duplicates and {counts.get('near_duplicates', 0)} near-duplicates "
                   f"merged, {counts['redactions']} secrets redacted)")


def _index(bundle: str):
    from ..memory.recall import MemoryIndex

    return MemoryIndex.open(bundle)


@memory.command("search")
@click.argument("bundle")
@click.argument("query")
@click.option("--namespace", help="global, project/<id>, conversation/<id>, skill/<id>, or a kind (project).")
@click.option("--category", type=CATEGORY_CHOICES, help="Only semantic memories of this category.")
@click.option("--type", "mtype", type=TYPE_CHOICES, help="Only memories of this type.")
@click.option("--top-k", default=10, show_default=True, type=click.IntRange(1, 10_000), help="How many results.")
@click.option("--min-importance", default=0.1, show_default=True, type=click.FloatRange(0, 1),
              help="Leave out memories whose effective importance is lower.")
@click.option("--as-of", help="Count recency to this time (default: the snapshot's as_of).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@reads_bundle
def search(bundle, query, namespace, category, mtype, top_k, min_importance, as_of, as_json) -> None:
    """Search a bundle's (or snapshot folder's) memories for QUERY, best first.

    Score = 0.40 TF-IDF cosine + 0.25 keyword overlap + 0.20 importance + 0.15 recency (seed 000),
    over every memory the filters keep (one sharing nothing with QUERY scores its importance and
    recency only); FTS5 prefix search over the snapshot database when the query shares no term
    with any memory. BUNDLE is a bundle folder or URL, a snapshot folder or a snapshot.json.
    Exit 1 when no memory passes the filters.
    """
    from ..memory.pipeline import parse_as_of
    from ..memory.recall import badge
    from ..validate.report import one_line

    index = _index(bundle)
    hits = index.search(query, namespace=namespace, category=category, type=mtype, top_k=top_k,
                        min_importance=min_importance, as_of=parse_as_of(as_of) if as_of else None)
    if as_json:
        click.echo(json.dumps({"query": query, "results": [h.to_json() for h in hits]}, ensure_ascii=False))
    else:
        for h in hits:
            e = h.entry
            click.echo(one_line(f"{h.score:.3f}  {badge(e)} {' '.join(e['content'].split())}  ({e['namespace']}, "
                                f"{e['id']})"))
        if not hits:
            click.echo("no memories match the filters", err=True)
        elif not any(h.similarity or h.keyword_overlap for h in hits):
            click.echo("note: no memory shares a term with the query; these rank by importance and recency only",
                       err=True)
    sys.exit(0 if hits else 1)


@memory.command("show")
@click.argument("bundle")
@click.argument("memory_id", required=False)
@click.option("--namespace", help="global, project/<id>, conversation/<id>, skill/<id>, or a kind (project).")
@click.option("--category", type=CATEGORY_CHOICES, help="Only semantic memories of this category.")
@click.option("--type", "mtype", type=TYPE_CHOICES, help="Only memories of this type.")
@click.option("--search", "text", help="Only memories whose content or keywords contain this text.")
@click.option("--status", type=click.Choice(["active", "superseded", "pruned", "all"]), default="active",
              show_default=True, help="Which memories: those in use, those superseded or pruned at freeze, or all.")
@click.option("--offset", default=0, type=click.IntRange(0), help="Skip this many memories of the list first.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(0), help="0: no limit.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {total, counts, memories:[…]} (one memory's entry with an ID) as JSON.")
@reads_bundle
def show(bundle, memory_id, namespace, category, mtype, text, status, offset, limit, as_json) -> None:
    """List a snapshot's memories like the memory tab (badge, stars, content), or show one by ID.

    The last line counts them per category: `23 memories │ 5 pref │ 8 conv │ 6 patn │ 3 warn │ 1 fact`.
    """
    from ..memory.recall import badge, stars
    from ..validate.report import one_line, terminal_safe

    # (a snapshot from a bundle or a URL is data: its text is shown, never run by the terminal)
    index = _index(bundle)
    if memory_id:
        e = index.get(memory_id)
        if e is None:
            raise SkillcError(f"no memory {memory_id!r} in {index.where}", exit_code=1)
        if as_json:
            click.echo(json.dumps(e, ensure_ascii=False, sort_keys=True, indent=1))
            return
        from ..memory.model import category_of

        kind = e["type"] + (", " + category_of(e) if category_of(e) else "")
        lines = [f"{badge(e)} {e['id']}  ({kind}, {e['namespace']}, {e.get('status')})", "", e["content"], "",
                 f"Importance: {e['importance']:.2f} (effective {e['effective_importance']:.2f}) {stars(e['effective_importance'])}",
                 f"Keywords: {', '.join(e['keywords']) or '-'}", f"Accessed: {e['access_count']} times",
                 f"Created: {e['created_at']}", f"Last used: {e['last_accessed_at']}",
                 f"Source: {e['source']} {json.dumps(e.get('provenance', {}), ensure_ascii=False, sort_keys=True)}"]
        for key in ("superseded_by", "supersedes", "reason"):
            if e.get(key):
                lines.append(f"{key.replace('_', ' ').capitalize()}: {e[key]}")
        if e.get("merged_from"):
            lines.append("Merged from: " + ", ".join(
                f"{m['id']} ({m['reason']}{' of ' + m['duplicate_of'] if m.get('duplicate_of') else ''})"
                for m in e["merged_from"]))
        click.echo(terminal_safe("\n".join(lines)))
        return
    matching = index.show(namespace=namespace, category=category, type=mtype, text=text, status=status)
    page = matching[offset: offset + limit if limit else None]
    if as_json:
        click.echo(json.dumps({"total": len(matching), "counts": index.stats(matching), "memories": page},
                              ensure_ascii=False))
        return
    for e in page:
        click.echo(one_line(f"{badge(e)} {stars(e['effective_importance'])}  {' '.join(e['content'].split())}  "
                            f"({e['namespace']}, {e['id']})"))
    c = index.stats(matching)
    click.echo(f"{c['memories']} memories │ {c['preference']} pref │ {c['convention']} conv │ {c['pattern']} patn │ "
               f"{c['correction']} warn │ {c['fact']} fact")


@memory.command("extract")
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--into", "into", help="Memory file to write (memory/NAME.yaml or .jsonl); default: print YAML.")
@click.option("--namespace", default="global", show_default=True,
              help="Namespace of the new entries (global, project/<id>, conversation/<id>, skill/<id>).")
@click.option("--force", is_flag=True, help="Overwrite the --into file if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
def extract(transcript: Path, into: str | None, namespace: str, force: bool, as_json: bool) -> None:
    """Turn a conversation's explicit memory commands into entries for review (no LLM).

    TRANSCRIPT is JSONL ({"role", "content"} per line) or plain text (`user: …` lines). The user's
    "remember that …", "always use …", "never …", "note that …" and `/remember …` become entries at
    importance 0.95; "forget that …" and `/forget …` become tombstones that forget matching older
    memories when frozen. Secrets are redacted.
    """
    from ..memory.extract import extract as run_extract
    from ..memory.load import dump_entries
    from ..memory.model import EntryError, check_namespace, iso
    from ..memory.pipeline import default_as_of
    from ..memory.redact import redact_entries

    try:
        check_namespace(namespace)
    except EntryError as exc:
        raise click.BadParameter(str(exc), param_hint="--namespace") from None
    try:
        st = transcript.stat()
        if not stat.S_ISREG(st.st_mode):  # (a FIFO or /dev/zero would never end)
            raise SkillcError(f"{transcript}: not a regular file", exit_code=1)
        if st.st_size > MAX_TRANSCRIPT_BYTES:
            raise SkillcError(f"{transcript}: {st.st_size:,} bytes; transcripts over {MAX_TRANSCRIPT_BYTES:,} bytes "
                              "are not read", exit_code=1)
        text = transcript.read_text("utf-8-sig")
    except UnicodeDecodeError:
        raise SkillcError(f"{transcript}: not UTF-8 text", exit_code=1) from None
    except OSError as exc:
        raise SkillcError(f"{transcript}: cannot read: {exc.strerror}", exit_code=1) from None
    notes: list[str] = []
    try:
        entries = run_extract(text, transcript=transcript.name, namespace=namespace,
                              default_time=iso(default_as_of()), notes=notes)
    except RecursionError:
        raise SkillcError(f"{transcript}: a JSON line nested too deep", exit_code=1) from None
    except EntryError as exc:  # (a remembered sentence that is not text an entry can hold)
        raise SkillcError(f"{transcript}: {exc}", exit_code=1) from None
    except ValueError as exc:
        raise SkillcError(f"{transcript}:{str(exc).removeprefix('line ')}", exit_code=1) from None
    for note in notes:
        click.echo(f"{transcript}: warning: {note}", err=True)
    entries_t, audit = redact_entries(entries)
    for r in audit:
        click.echo(f"redacted: entry {r.entry} {r.field}: {r.count} × {r.kind}", err=True)
    if into:
        path = _check_into(into)
        _write_output(path, dump_entries(entries_t, path.name), force)
    remembered = sum(1 for e in entries_t if not e.forget)
    if as_json:
        click.echo(json.dumps({"entries": [e.to_json() for e in entries_t], "remember": remembered,
                               "forget": len(entries_t) - remembered, "into": into}, ensure_ascii=False))
    elif into:
        click.echo(f"extracted {remembered} memories and {len(entries_t) - remembered} tombstones into {into}")
    else:
        click.echo(dump_entries(entries_t, "stdout.yaml"), nl=False)
