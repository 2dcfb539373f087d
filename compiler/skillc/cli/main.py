"""The ``skillc`` command line.

Commands live in ``skillc.cli.<name>`` and are imported only when run, so ``skillc lint`` in a
pre-commit hook does not pay for the build, search or memory stages.  Exit codes: 0 success, 1 the
inputs fail (lint errors, a failed build), 2 usage or internal error.
"""

from __future__ import annotations

import errno
import gc
import importlib
import importlib.util
import os
import signal
import sys

import click

from ..errors import SkillcError
from ..version import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, one-line help shown in `skillc --help`)
    "lint": ("skillc.cli.lint", "Check skills, convention files and frontmatter against the rules."),
    "rules": ("skillc.cli.rules", "List the lint rules, or explain one."),
    "build": ("skillc.cli.build", "Compile skill repositories into a static bundle."),
    "serve": ("skillc.cli.serve", "Serve a bundle over HTTP (site at /, API at /api)."),
    "search": ("skillc.cli.search", "Search a bundle's skills (BM25)."),
    "select": ("skillc.cli.select", "Select the skills for a message (detection + lexical scorer)."),
    "render": ("skillc.cli.render", "Render a bundle's skills in a framework's prompt format."),
    "pack": ("skillc.cli.archive", "Pack one skill directory into a zip archive."),
    "export": ("skillc.cli.archive", "Export skills from a source into a zip archive."),
    "import": ("skillc.cli.archive", "Import skills from a zip archive, safely."),
    "memory": ("skillc.cli.memory", "Import, consolidate, freeze and search agent memories."),
    "new": ("skillc.cli.new", "Create a new skill from the template."),
    "mcp": ("skillc.cli.mcp", "Serve a bundle to agents over MCP (tools, resources, skills extension)."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._available(name)]

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS or not self._available(name):
            return None
        module = importlib.import_module(COMMANDS[name][0])
        attr = "import_" if name == "import" else name
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="skillc")
@click.option("--debug", is_flag=True, help="Show a full traceback on internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """skillc: a build-time compiler for agent skills ("skills as code").

    Lint SKILL.md repositories in CI, resolve which skill wins when several repositories offer the
    same one, precompute search indexes and a frozen memory snapshot, and publish a static bundle
    that agents read over plain HTTP.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="skillc", standalone_mode=False)
    except click.exceptions.Abort as exc:  # (click's form of Ctrl-C, and of SIGTERM: see run)
        # (click before 8.1.4 raised the Abort `from None`: the SIGTERM is then only its context)
        if isinstance(exc.__cause__ or exc.__context__, Terminated):
            click.echo("Terminated.", err=True)
            sys.exit(128 + 15)
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        import io

        from ..validate.report import (
            shown,  # (a usage error quotes the path given: a folder may be named like a token)
        )

        shown_text = io.StringIO()
        exc.show(file=shown_text)
        click.echo(shown(shown_text.getvalue().rstrip("\n"), lines=True), err=True)
        args = argv if argv is not None else sys.argv[1:]
        if _command_name(args) == "build" and "--json" in args:  # (a usage error is a failed build too)
            import json

            click.echo(json.dumps({"ok": False, "error": exc.format_message(), "hint": "see skillc build --help",
                                   "failed": {}, "diagnostics": []}, ensure_ascii=False, sort_keys=True))
        sys.exit(2)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except SkillcError as exc:
        from ..validate.report import shown  # (messages quote names and paths that may come from remote data)

        click.echo(f"skillc: error: {shown(str(exc), lines=True)}", err=True)
        if exc.hint:
            click.echo(f"  hint: {shown(exc.hint, lines=True)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        click.echo("Terminated." if terminated else "Interrupted.", err=True)
        sys.exit(128 + 15 if terminated else 130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # an internal error: one line and a hint, a traceback only with --debug
        if debug:
            raise
        if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:
            # A full disk or a failing device (`skillc rules > /dev/full`, a full CI volume) is the
            # environment, not a bug to report: one line, exit 1, as a build's environment failures.
            where = f"{exc.filename}: " if exc.filename else ""
            try:
                click.echo(f"skillc: error: cannot write: {where}{exc.strerror or exc}", err=True)
                click.echo("  hint: check the free space and the device skillc writes to (its output, or "
                           "standard output)", err=True)
            except OSError:  # (standard error on the same full device)
                pass
            sys.exit(1)
        click.echo(f"skillc: internal error: {type(exc).__name__}: {exc}", err=True)
        click.echo("  hint: run again with --debug for a traceback, and report it", err=True)
        sys.exit(2)
    sys.exit(0)


# errno values that say the device or file system failed a write: never skillc's bug
_ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


def _command_name(argv: list[str]) -> str | None:
    """The subcommand in ``argv`` (the first word that is not an option of the group)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _utf8_file_names() -> None:
    """Under a locale whose encoding is not UTF-8 (``de_DE`` in ISO-8859-1), Python decodes file
    names with it: ``résumé.md`` would become ``rÃ©sumÃ©.md`` in IDs, paths and links, and the bundle
    would depend on the locale.  Run again in Python's UTF-8 mode (file names, arguments and
    environment read as UTF-8, as on every other system), which the children inherit."""
    if sys.flags.utf8_mode or sys.getfilesystemencoding().replace("-", "").lower() == "utf8":
        return
    if os.environ.get("SKILLC_UTF8_RERUN"):  # (ran again already and still not in UTF-8 mode: go on)
        return
    os.environ["PYTHONUTF8"] = "1"
    os.environ["SKILLC_UTF8_RERUN"] = "1"
    try:
        # (-P: not the current folder first on sys.path, so no `yaml.py` or `skillc/` in the linted
        # project can be imported in skillc's place)
        os.execv(sys.executable, [sys.executable, "-X", "utf8", "-P", "-m", "skillc", *sys.argv[1:]])
    except OSError:  # (no interpreter to run again: go on in the locale's encoding)
        pass


def _reopen_closed_streams() -> None:
    """A standard stream the caller closed (``skillc rules >&-``) becomes /dev/null: what would be
    written to it is dropped and the command's exit status stays its own.  The descriptor is filled
    first, so no file skillc opens later takes number 1 or 2 (and receives its output, or a child's).

    Closed too: an output descriptor open for reading only.  A shell script between the caller and
    Python (a pyenv shim, a wrapper) opens itself as the lowest free descriptor, so after
    ``skillc build 2>&-`` descriptor 2 is the wrapper's own text, which no write can reach."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            closed = fd != 0 and _read_only(fd)
        except OSError:
            closed = True
        if closed:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))


def _read_only(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # (no fcntl: not a POSIX system; the descriptor is taken as it is)
        return False
    return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is (``run``)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated()


# What the command built, kept alive until ``os._exit`` (see ``run``).
_HELD_UNTIL_EXIT: list[BaseException] = []


def run() -> None:
    """The ``skillc`` command: ``main``, then leave at once.

    A lint or build of thousands of skills ends holding millions of small objects; freeing them one
    by one and the interpreter's final collection took 0.3-1 s after the work was done (a third of
    a 10,000-skill lint).  Every command has closed its files and removed its temporary folders by
    the time ``main`` returns, so the process flushes its output and exits without that teardown.

    For the same reason a batch command runs without the cyclic garbage collector: its objects are
    freed by reference counting, and full collections that traverse every document again and again
    found nothing to free (0.1-0.3 s at the end of a 10,000-skill lint, when ``lint_root`` turns it
    back on).  ``serve`` and ``mcp`` run until stopped, so they keep the collector.
    """
    _utf8_file_names()
    _reopen_closed_streams()
    if _command_name(sys.argv[1:]) not in ("serve", "mcp"):
        gc.disable()
        # `kill`, a CI job's timeout, `docker stop`: unwind as from Ctrl-C, so staging folders are
        # removed and locks released (workers put the default back: parallel.die_with_parent).
        signal.signal(signal.SIGTERM, _terminated)
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        # (held until the exit: its traceback holds the command's frames, and with them everything
        # it built; let go here, they would be freed object by object just before os._exit)
        code = exc.code
        _HELD_UNTIL_EXIT.append(exc)
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        code = code or 1
    os._exit(code)
