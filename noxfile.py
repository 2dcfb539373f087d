"""nox sessions: tests, lint, docs, bench.  `nox -s tests` is what the README and .ci/run call."""

from __future__ import annotations

import os
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


@nox.session(python=False if os.environ.get("SKILLC_NOX_NO_VENV") else None)
def tests(session: nox.Session) -> None:
    """Install skillc with every extra, the system tools tests need (git, nginx, chromium), run pytest."""
    session.run("bash", "tests/setup_system.sh", external=True)
    for script in sorted(Path("tests/setup").glob("*.sh")):  # real clients (npm, PyPI), pinned
        session.run("bash", str(script), external=True)
    session.install("-e", ".[dev]")
    workers = os.environ.get("SKILLC_TEST_WORKERS", "auto")
    session.run("pytest", "-n", workers, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Static checks of skillc's own code, and skillc lint of the embedded skills (spec profile)."""
    session.install("-e", ".", "ruff")
    session.run("ruff", "check", "compiler", "tests", "benchmarks", "noxfile.py")
    session.run("skillc", "lint", "--profile", "spec", "--strict", "skills")


@nox.session
def docs(session: nox.Session) -> None:
    """skillc's own documentation site (mkdocs.yml, docs/): built strictly into .mkdocs-site/."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: each prints its own baseline measured in the same run, and the ratio."""
    session.install("-e", ".[dev]", "skills-ref", "tantivy", "numpy", "waitress==3.0.2")  # (bench_serve compares it)
    session.run("bash", "tests/setup/lint.sh", external=True)  # agnix, the lint peer (bench_agnix)
    session.run("python", "benchmarks/run.py", *session.posargs)
