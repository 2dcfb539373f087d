"""Bounded rendering of the site's pages: one hostile skill body never fails or stalls the site.

Python-Markdown recurses once per nesting level (a 250-level nested list raised RecursionError,
and mkdocs then failed the whole site, ``--keep-going`` or not) and parses a run of ``[`` in
quadratic time (24,000 of them took 80 s, 64 KB minutes).  mkdocs runs as
``python -m skillc.emit.docsite.bounded build …``: mkdocs' own command, with each page's rendering
(``Page.render``) bounded:

* **time**: ``PAGE_SECONDS`` of wall-clock time (an interval timer raises in the rendering, which
  runs in mkdocs' main thread);
* **depth**: ``RENDER_FRAMES`` stack frames above mkdocs' own (the recursion limit while the page
  renders; the RecursionError is caught for that page only).

A page that cannot be rendered within them is rendered again from a plain version
(``fallback_markdown``): a skill page keeps its header and shows its body as a fenced code block
(escaped, never parsed as Markdown); another page shows its whole Markdown so.  Each such page is
appended to ``FALLBACK_LOG`` in the project folder; the build moves the list into the site
(``FALLBACK_RECORD``, so a rebuild that reuses the site reports them again) and reports each one as
an R130 warning naming the skill.  Pages are rendered once: the bound costs one timer per page.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .incremental import FALLBACK_RECORD

if TYPE_CHECKING:  # (the mkdocs child imports this module: it needs neither, and they take time)
    from ...resolve_types import EmitContext

PAGE_SECONDS = 10.0  # a page of any corpus renders in well under a second; the quadratic cases take minutes
# Frames a page's rendering may use above the caller's: Python-Markdown takes a few per nesting level
# (a list 10 deep needs well under 100); the 250-level list hit Python's limit only after seconds.
RENDER_FRAMES = 400
FALLBACK_LOG = "skillc-fallbacks.jsonl"  # beside mkdocs.yml: one line per page rendered as plain text
TEMPLATE_OPTION = "--template-cache"  # the folder the theme's compiled templates are kept in (lean_theme)
# The command line comes as one JSON line on stdin (``__init__.start_mkdocs``: started early); the
# word ``mkdocs`` in it names the child in a process list.
ARGS_FROM_STDIN = "--mkdocs-args-from-stdin"
JOBS_OPTION = "--jobs"  # worker processes rendering the pages (page_workers; default 1: mkdocs' own loop)
_BODY_START = "\n## SKILL.md\n\n"  # (site/pages/skill.md.j2: the body comes last, under this heading,
_BODY_END = "\n[skillc-files]: "  # and is followed by the reference pages.body_markdown writes)


@dataclass(frozen=True)
class Fallback:
    """A page rendered as plain text: ``doc`` below ``docs/``, and why its Markdown was not used."""

    doc: str
    reason: str


class PageTimeout(Exception):
    """A page's rendering ran over ``PAGE_SECONDS``."""


def fence(text: str) -> str:
    """``text`` as a fenced code block: a fence longer than any run of ``~`` in it, so it cannot close early."""
    longest = max((len(run) for run in re.findall(r"~+", text)), default=0)
    marker = "~" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{marker} text\n{body}{marker}\n"


def _notice(reason: str) -> str:
    return (f"!!! warning \"Shown as plain text\"\n    skillc could not render this page within its bounds "
            f"({reason}); its text is shown as written.\n\n")


def fallback_markdown(markdown: str, reason: str) -> str:
    """The page's plain version (Markdown after its front matter): a skill page's body fenced below
    its header, else the whole page fenced."""
    start, end = markdown.rfind(_BODY_START), markdown.rfind(_BODY_END)
    if 0 <= start < end:
        head, body = markdown[:start + len(_BODY_START)], markdown[start + len(_BODY_START):end]
        return head + _notice(reason) + fence(body)
    return _notice(reason) + fence(markdown)


def _raise_timeout(signum, frame) -> None:  # noqa: ARG001  (a signal handler's signature)
    raise PageTimeout


def _depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _bounded(render, log: Path, seconds: float):
    """``Page.render`` within the bounds; a page that cannot be is rendered from its plain version."""

    def render_page(page, config, files) -> None:
        previous = signal.signal(signal.SIGALRM, _raise_timeout)
        limit = sys.getrecursionlimit()
        try:
            sys.setrecursionlimit(_depth() + RENDER_FRAMES)
            signal.setitimer(signal.ITIMER_REAL, seconds)
            try:
                render(page, config, files)
                return
            except PageTimeout:
                reason = f"over {seconds:g} s"
            except RecursionError:
                reason = "nested too deeply (RecursionError)"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            sys.setrecursionlimit(limit)
            signal.signal(signal.SIGALRM, previous)
        page.markdown = fallback_markdown(page.markdown or "", reason)
        render(page, config, files)  # (fenced code: linear, and nothing in it is parsed)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"doc": page.file.src_uri, "reason": reason}, ensure_ascii=False) + "\n")

    return render_page


def fresh_inodes() -> None:
    """Make mkdocs unlink each file before writing it: it writes in place (``open(path, "wb")``
    truncates the same inode), and the kept output's files are hard-linked into published bundles
    (``incremental.link_site``), which must keep their bytes while a rebuild runs."""
    from mkdocs import utils
    from mkdocs.structure.files import File

    write_file, copy_file = utils.write_file, File.copy_file

    def write_new(content: bytes, output_path: str) -> None:
        _unlink(output_path)
        write_file(content, output_path)

    def copy_new(self, dirty: bool = False) -> None:
        if not dirty or self.is_modified():
            _unlink(self.abs_dest_path)
        copy_file(self, dirty)

    utils.write_file, File.copy_file = write_new, copy_new


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:  # (mkdocs' own error follows)
        pass


def lean_theme(templates: Path | None, keep_404: bool = False) -> None:
    """mkdocs' fixed cost, cut: the theme's Jinja templates compiled once and kept in ``templates``
    (jinja checks each one's source, so a changed theme compiles again); the theme's files listed
    without walking its hidden folders (material's ``.icons``: 14,348 of its 14,509 files, which
    mkdocs lists on every build only to leave out: it copies no hidden file); no sitemap (the
    bundle drops it: no site URL is known; mkdocs renders it from every page on every build); and,
    with ``keep_404`` (a dirty build over an output that has one), the 404 page kept: it shows only
    the theme and the nav, which ``mkdocs.yml`` declares, so it changes only with a clean build."""
    from jinja2 import FileSystemBytecodeCache, FileSystemLoader
    from mkdocs.theme import Theme

    get_env, init = Theme.get_env, Theme.__init__

    class VisibleLoader(FileSystemLoader):
        def list_templates(self) -> list[str]:
            found = set()
            for root in self.searchpath:
                for folder, subfolders, names in os.walk(root, followlinks=self.followlinks):
                    subfolders[:] = [d for d in subfolders if not d.startswith(".")]
                    rel = os.path.relpath(folder, root).replace(os.sep, "/")
                    found.update(name if rel == "." else f"{rel}/{name}" for name in names)
            return sorted(found)

    def cached_env(self):
        env = get_env(self)
        loader = env.loader
        if type(loader) is FileSystemLoader:
            visible = VisibleLoader(loader.searchpath, loader.encoding, loader.followlinks)
            env.loader = visible
        if templates is not None:
            templates.mkdir(parents=True, exist_ok=True)
            env.bytecode_cache = FileSystemBytecodeCache(str(templates))
        return env

    def no_sitemap(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        self.static_templates.discard("sitemap.xml")
        if keep_404:
            self.static_templates.discard("404.html")

    Theme.get_env, Theme.__init__ = cached_env, no_sitemap


def reused_markdown() -> None:
    """mkdocs' ``Page.render`` with one ``Markdown`` per process, reset for each page, instead of a new
    one per page: building it (loading and registering the extensions) was ≈ 10 % of a page's
    rendering.  mkdocs' page-specific processors (relative links, anchors, title, raw-HTML IDs) are
    registered afresh for each page, replacing the previous page's by name.  A rendering that raises
    (a page over its bound, an error) drops the instance: its parser may hold the half-parsed
    page's state, which ``reset`` does not clear."""
    import markdown
    from mkdocs.structure import pages

    from .markdown_safe import trusted_html

    kept: dict[int, markdown.Markdown] = {}

    def render(self, config, files) -> None:
        if self.markdown is None:
            raise RuntimeError("`markdown` field hasn't been set (via `read_source`)")
        md = kept.pop(id(config), None) or markdown.Markdown(
            extensions=config["markdown_extensions"], extension_configs=config["mdx_configs"] or {})
        md.reset()
        raw_html = pages._RawHTMLPreprocessor()
        raw_html._register(md)
        anchors = pages._ExtractAnchorsTreeprocessor(self.file, files, config)
        anchors._register(md)
        relative = pages._RelativePathTreeprocessor(self.file, files, config)
        relative._register(md)
        title = pages._ExtractTitleTreeprocessor()
        title._register(md)
        trusted_html(md, self.meta)  # (this page's generated HTML blocks, if its templates marked it)
        self.content = md.convert(self.markdown)
        kept[id(config)] = md
        self.toc = pages.get_toc(getattr(md, "toc_tokens", []))
        self._title_from_render = title.title
        self.present_anchor_ids = anchors.present_anchor_ids | raw_html.present_anchor_ids
        if pages.log.getEffectiveLevel() > logging.DEBUG:
            self.links_to_anchors = relative.links_to_anchors

    pages.Page.render = render


def _option(args: list[str], name: str) -> str | None:
    """The value of ``name VALUE`` in ``args``, taken out of them (mkdocs does not know it)."""
    if name not in args:
        return None
    at = args.index(name)
    value = args[at + 1]
    del args[at:at + 2]
    return value


def _args_from_stdin() -> list[str] | None:
    """``ARGS_FROM_STDIN``: what takes time before mkdocs can read a project imported first (mkdocs,
    its command line and build command, the Markdown extensions the site uses), then the command line read as one
    JSON line; None when the input closes first (the build needs no mkdocs run after all)."""
    import importlib

    import material.templates  # noqa: F401  (the theme, and what it imports: loaded with the config)
    import mkdocs.__main__  # noqa: F401  (imported to be ready: what the wait is for)
    import mkdocs.commands.build  # noqa: F401
    import mkdocs.config.defaults  # noqa: F401

    from .markdown_config import EXTENSIONS, markdown

    # (mkdocs adds fenced_code to every site; pymdownx.highlight takes codehilite's options)
    for name in (*(n for n, _ in EXTENSIONS), "fenced_code", "codehilite"):
        importlib.import_module(name if "." in name else f"markdown.extensions.{name}")
    # What the extensions import on their first page (a fenced block: highlighting, Pygments' lexer
    # base and style, heading slugs; ≈ 10 ms): done here, not on the rebuild's path.
    markdown().convert("# Ready\n\n```text\nready\n```\n")
    line = sys.stdin.readline()
    if not line.strip():
        return None
    args = [str(a) for a in json.loads(line)]
    config = Path(args[args.index("--config-file") + 1])
    os.chdir(config.parent)  # (where mkdocs runs when started with the project ready)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m skillc.emit.docsite.bounded build … [--template-cache DIR] [--jobs N] [--listed-docs]``:
    mkdocs' command line, each page rendered within bounds (by ``N`` worker processes), each file
    written as a new inode, the theme kept compiled; ``--listed-docs``: a dirty build of what the
    listing on stdin names as changed (``listed``).  ``… bounded --mkdocs-args-from-stdin``: the same, started
    before the project is written (``_args_from_stdin``)."""
    from mkdocs.__main__ import cli
    from mkdocs.structure.pages import Page

    from .listed import LISTED_OPTION, read_listing, use_listing
    from .page_workers import use_workers

    args = list(sys.argv[1:] if argv is None else argv)
    if args == [ARGS_FROM_STDIN]:
        read = _args_from_stdin()
        if read is None:
            return
        args = read
    cache = _option(args, TEMPLATE_OPTION)
    templates = Path(cache) if cache is not None else None
    jobs = int(_option(args, JOBS_OPTION) or 1)
    use_workers(jobs)
    if LISTED_OPTION in args:  # (the parent's listing of docs/ follows the command line: listed.py)
        args.remove(LISTED_OPTION)
        use_listing(read_listing(sys.stdin), jobs)
    config = Path(args[args.index("--config-file") + 1]) if "--config-file" in args else Path("mkdocs.yml")
    reused_markdown()
    Page.render = _bounded(Page.render, config.parent / FALLBACK_LOG, PAGE_SECONDS)
    site = Path(args[args.index("--site-dir") + 1]) if "--site-dir" in args else config.parent / "site"
    fresh_inodes()
    lean_theme(templates, keep_404="--dirty" in args and (site / "404.html").is_file())
    try:
        cli.main(args=args, prog_name="mkdocs")
    except SystemExit as exc:  # (click ends every command so, 0 on success)
        if exc.code is None or isinstance(exc.code, int):
            _exit(exc.code or 0)
        raise


def _exit(code: int) -> None:
    """End the child without the interpreter's teardown (≈ 0.07 s of freeing mkdocs, Markdown and
    the theme, on the path of every rebuild): every file it wrote is closed (mkdocs writes each
    with ``with open``), its workers have ended; what remains is its output streams, flushed."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def read_log(project: Path) -> tuple[Fallback, ...]:
    """The pages the bounded mkdocs rendered as plain text, in byte order of their paths."""
    try:
        lines = (project / FALLBACK_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return ()
    rows = {}
    for line in lines:
        row = json.loads(line)
        rows[str(row["doc"])] = str(row["reason"])
    return tuple(Fallback(doc, rows[doc]) for doc in sorted(rows, key=str.encode))


def forget(project: Path, docs: Sequence[str]) -> None:
    """Drop from the log the pages of ``docs`` (project paths, ``docs/…``): a build ``--dirty`` renders
    them again and logs them anew if they still fall back; the others keep their line."""
    gone = {d[len("docs/"):] for d in docs if d.startswith("docs/")}
    try:
        lines = (project / FALLBACK_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    kept = [ln for ln in lines if str(json.loads(ln)["doc"]) not in gone]
    (project / FALLBACK_LOG).write_text("".join(ln + "\n" for ln in kept), encoding="utf-8")


def write_record(site_dir: Path, fallbacks: Sequence[Fallback]) -> None:
    """``FALLBACK_RECORD`` in the built site (only when a page fell back: other sites are unchanged)."""
    if not fallbacks:
        return
    from .incremental import replace_bytes

    rows = [{"doc": f.doc, "reason": f.reason} for f in fallbacks]
    replace_bytes(site_dir / FALLBACK_RECORD, json.dumps(rows, ensure_ascii=False, sort_keys=True, indent=1).encode() + b"\n")


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
    from ...model import Diagnostic
    from ...validate.rules.loader import load_all
    from .pages import skill_doc

    rule = load_all()["R130"]  # (the diagnostic is raised through its declared rule: code and severity)
    by_doc = {skill_doc(s.id): s for s in ctx.resolution.skills}
    for f in fallbacks:
        skill = by_doc.get(f.doc)
        if skill is not None:
            message = (f"skill {skill.id!r}: its site page could not be rendered within bounds ({f.reason}); "
                       f"the page shows its body as plain text")
            ctx.collected.diagnostics.append((skill.repository.name, Diagnostic(
                rule.code, rule.severity, skill.document.path, skill.document.body_line, 0, message, skill.id)))
        else:
            ctx.collected.notes.append(f"site page {f.doc} could not be rendered within bounds ({f.reason}); shown as plain text")


if __name__ == "__main__":
    main()

__all__ = ["ARGS_FROM_STDIN", "FALLBACK_LOG", "FALLBACK_RECORD", "JOBS_OPTION", "TEMPLATE_OPTION", "Fallback", "fallback_markdown", "fence", "main", "read_log",
           "read_record", "report_fallbacks", "write_record"]
