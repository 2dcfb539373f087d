"""Bounded rendering of the site's pages: one hostile skill body never fails or stalls the site.

Python-Markdown recurses once per nesting level (a 250-level nested list raises RecursionError,
and mkdocs then fails the whole site) and parses a run of ``[`` in quadratic time (24,000 of them
took 80 s, 64 KB minutes).  Before mkdocs runs, every page of the written project is rendered once
with the project's own Markdown configuration, in forked worker processes:

* **time**: a page that takes over ``PAGE_SECONDS`` has its worker killed (a signal could not
  interrupt a regular expression running in C; a process can always be killed);
* **depth**: the workers' recursion limit is ``RECURSION_LIMIT``, well below the mkdocs child's
  (1,000), so a page that renders here renders there, whatever frames mkdocs adds above it; a page
  deep enough to overflow the C stack only kills its worker.

A page that cannot be rendered within the bounds is rewritten (``fallback_pages``): a skill page
keeps its header and shows its body as a fenced code block (escaped, never parsed); failing that,
the page's whole Markdown is shown so; failing that, one sentence.  ``FALLBACK_RECORD`` in the site
lists them (so a rebuild that reuses the site reports them again), and the build reports each one as
an R130 warning naming the skill.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path

from ..model import Diagnostic, Severity
from ..resolve_types import EmitContext

PAGE_SECONDS = 10.0  # a page of any corpus renders in milliseconds; the quadratic cases take minutes
RECURSION_LIMIT = 600  # the mkdocs child keeps Python's 1,000: 400 frames of margin for mkdocs' own
FALLBACK_RECORD = "assets/skillc/fallbacks.json"  # in the built site: the pages shown as plain text


@dataclass(frozen=True)
class Fallback:
    """A page rendered as plain text: ``doc`` below ``docs/``, and why its Markdown was not used."""

    doc: str
    reason: str


@dataclass(frozen=True)
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection


def fence(text: str) -> str:
    """``text`` as a fenced code block: a fence longer than any run of ``~`` in it, so it cannot close early."""
    longest = max((len(run) for run in re.findall(r"~+", text)), default=0)
    marker = "~" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{marker} text\n{body}{marker}\n"


def _split_meta(text: str) -> tuple[str, str]:
    """(front matter with its ``---`` lines, the Markdown after it), as mkdocs reads a page."""
    m = re.match(r"---[ \t]*\n.*?\n---[ \t]*\n", text, re.DOTALL) if text.startswith("---") else None
    return (m.group(0), text[m.end():]) if m else ("", text)


def _notice(reason: str) -> str:
    return (f"!!! warning \"Shown as plain text\"\n    skillc could not render this page within its bounds "
            f"({reason}); its text is shown as written.\n\n")


def fallback_candidates(text: str, body: str | None, reason: str) -> list[str]:
    """The page's plain versions, best first: body fenced (skill pages), whole page fenced, a sentence."""
    meta, markdown = _split_meta(text)
    out = []
    at = markdown.rfind(body) if body else -1
    if body and at >= 0:
        out.append(meta + markdown[:at] + "\n" + _notice(reason) + fence(body) + markdown[at + len(body):])
    out.append(meta + _notice(reason) + fence(markdown))
    out.append(meta + _notice(reason))
    return out


def _renderer(config: Path) -> Callable[[str], None]:
    """Render a page's text as mkdocs would (its configured extensions); raises what Markdown raises."""
    import markdown
    from mkdocs.config import load_config
    from mkdocs.utils.meta import get_data

    cfg = load_config(str(config))
    extensions, configs = cfg["markdown_extensions"], cfg["mdx_configs"] or {}

    def render(text: str) -> None:
        markdown.Markdown(extensions=extensions, extension_configs=configs).convert(get_data(text)[0])

    return render


def _serve(conn: Connection, project: Path, render: Callable[[str], None]) -> None:
    """A worker's loop: pages in, ``None`` (rendered) or the exception's name out."""
    os.chdir(project)  # (extension options name files relative to the project, as mkdocs runs there)
    sys.setrecursionlimit(RECURSION_LIMIT)
    while True:
        try:
            text = conn.recv()
        except EOFError:
            os._exit(0)
        try:
            render(text)
            conn.send(None)
        except BaseException as exc:  # noqa: BLE001  (a hostile page may raise anything)
            conn.send(type(exc).__name__)


def _start(project: Path, render: Callable[[str], None]) -> _Worker:
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    proc = context.Process(target=_child_main, args=(os.getpid(), child, project, render), daemon=True)
    proc.start()
    child.close()
    return _Worker(proc, parent)


def _child_main(parent: int, conn: Connection, project: Path, render: Callable[[str], None]) -> None:
    from ..parallel import die_with_parent

    die_with_parent(parent)  # (a killed build leaves no renderer behind)
    _serve(conn, project, render)


def _stop(worker: _Worker) -> None:
    worker.process.kill()
    worker.process.join()
    worker.conn.close()


def render_bounded(pages: Sequence[tuple[str, str]], project: Path, render: Callable[[str], None], jobs: int,
                   seconds: float = PAGE_SECONDS) -> dict[str, str]:
    """Render each ``(doc, text)`` in ``jobs`` forked workers; ``{doc: reason}`` for those that failed."""
    todo: Iterator[tuple[str, str]] = iter(pages)
    failed: dict[str, str] = {}
    busy: dict[Connection, tuple[_Worker, str, float]] = {}
    idle = [_start(project, render) for _ in range(max(1, min(jobs, len(pages))))]
    try:
        while True:
            while idle:
                page = next(todo, None)
                if page is None:
                    break
                worker = idle.pop()
                worker.conn.send(page[1])
                busy[worker.conn] = (worker, page[0], time.monotonic() + seconds)
            if not busy:
                return failed
            now = time.monotonic()
            for conn in wait(list(busy), timeout=max(0.0, min(d for _, _, d in busy.values()) - now)):
                worker, doc, _ = busy.pop(conn)
                try:
                    result = conn.recv()
                except (EOFError, OSError):  # the worker died (C stack overflow, out of memory)
                    failed[doc] = f"the renderer crashed (exit status {worker.process.exitcode})"
                    _stop(worker)
                    idle.append(_start(project, render))
                    continue
                if result is not None:
                    failed[doc] = result
                idle.append(worker)
            for conn, (worker, doc, deadline) in list(busy.items()):
                if conn not in busy or time.monotonic() < deadline:
                    continue
                del busy[conn]
                failed[doc] = f"over {seconds:g} s"
                _stop(worker)
                idle.append(_start(project, render))
    finally:
        for worker in idle + [w for w, _, _ in busy.values()]:
            _stop(worker)


def bound_project(config: Path, bodies: Mapping[str, str], jobs: int,
                  seconds: float = PAGE_SECONDS) -> tuple[Fallback, ...]:
    """Render every page of the written mkdocs project ``config`` within the bounds; rewrite the
    pages that fail with their plain versions.  ``bodies``: a skill page's body, by ``doc``."""
    docs = config.parent / "docs"
    texts = {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(docs.rglob("*.md"))}
    render = _renderer(config)
    failed = render_bounded(sorted(texts.items()), config.parent, render, jobs, seconds)
    fallbacks = tuple(Fallback(doc, failed[doc]) for doc in sorted(failed, key=str.encode))
    candidates = {f.doc: fallback_candidates(texts[f.doc], bodies.get(f.doc), f.reason) for f in fallbacks}
    while candidates:
        tried = {doc: options.pop(0) for doc, options in candidates.items()}
        again = render_bounded(sorted(tried.items()), config.parent, render, jobs, seconds)
        for doc, text in tried.items():
            if doc not in again or not candidates[doc]:
                (docs / doc).write_text(text, encoding="utf-8", newline="\n")
        candidates = {doc: options for doc, options in candidates.items() if doc in again and options}
    return fallbacks


def write_record(site_dir: Path, fallbacks: Sequence[Fallback]) -> None:
    """``FALLBACK_RECORD`` in the built site (only when a page fell back: other sites are unchanged)."""
    if not fallbacks:
        return
    path = site_dir / FALLBACK_RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"doc": f.doc, "reason": f.reason} for f in fallbacks]
    path.write_bytes(json.dumps(rows, ensure_ascii=False, sort_keys=True, indent=1).encode() + b"\n")


def read_record(site_dir: Path) -> tuple[Fallback, ...]:
    """The fallbacks of a site reused from the previous bundle (none when it has no record)."""
    try:
        rows = json.loads((site_dir / FALLBACK_RECORD).read_bytes())
        return tuple(Fallback(str(r["doc"]), str(r["reason"])) for r in rows)
    except (OSError, ValueError, TypeError, KeyError):
        return ()


def report_fallbacks(ctx: EmitContext, fallbacks: Sequence[Fallback]) -> None:
    """Each page shown as plain text, for the build to print: an R130 warning on the skill's
    SKILL.md (a skill page), else a note naming the page."""
    from .pages import skill_doc

    by_doc = {skill_doc(s.id): s for s in ctx.resolution.skills}
    diagnostics, notes = ctx.options.get("diagnostics"), ctx.options.get("notes")
    for f in fallbacks:
        skill = by_doc.get(f.doc)
        if skill is not None and isinstance(diagnostics, list):
            message = (f"skill {skill.id!r}: its site page could not be rendered within bounds ({f.reason}); "
                       f"the page shows its body as plain text")
            diagnostics.append((skill.repository.name, Diagnostic(
                "R130", Severity.WARNING, skill.document.path, skill.document.body_line, 0, message, skill.id)))
        elif isinstance(notes, list):
            notes.append(f"site page {f.doc} could not be rendered within bounds ({f.reason}); shown as plain text")


__all__ = ["FALLBACK_RECORD", "Fallback", "bound_project", "fallback_candidates", "fence", "read_record", "report_fallbacks",
           "render_bounded", "write_record"]
