"""The house (issue 18): no import cycle among skillc's modules, and the project's docs build.

The import graph is read with ``ast`` by ``scripts/house_metrics.py`` (the same count the metrics
report prints), module-level and function-level imports alike: an import moved into a function
still runs, and still ties the two modules together.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import PROJECT

_spec = importlib.util.spec_from_file_location("house_metrics", PROJECT / "scripts" / "house_metrics.py")
house_metrics = importlib.util.module_from_spec(_spec)
sys.modules["house_metrics"] = house_metrics  # (dataclasses look their module up by name)
_spec.loader.exec_module(house_metrics)


def _explain(edges, cycles) -> str:
    lines = []
    for cycle in cycles:
        lines.append(" <-> ".join(cycle))
        lines += [f"    {e.source}:{e.line} imports {e.target}" + (" (in a function)" if e.function_level else "")
                  for e in house_metrics.cycle_edges(edges, cycle)]
    return "\n".join(lines)


def test_skillc_modules_import_no_cycle():
    edges = house_metrics.import_graph()
    cycles = house_metrics.import_cycles(edges)
    assert not cycles, "import cycles among compiler/skillc modules:\n" + _explain(edges, cycles)


def test_the_graph_sees_every_import_a_cycle_can_hide_in(tmp_path):
    """A cycle closed by a function-level import, a relative ``from . import module`` or a package
    ``__init__`` importing its submodule is found; a package's submodule importing a sibling is not
    a cycle with the package."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from . import a\n    return a\n")
    (pkg / "sub" / "__init__.py").write_text("def make():\n    from .leaf import Leaf\n    return Leaf\n")
    (pkg / "sub" / "base.py").write_text("class Base: ...\n")
    (pkg / "sub" / "leaf.py").write_text("from .base import Base\nclass Leaf(Base): ...\n")
    (pkg / "c.py").write_text("import pkg.d\n")
    (pkg / "d.py").write_text("from pkg import c\n")
    modules = house_metrics.module_files(tmp_path, "pkg")
    edges = house_metrics.import_graph(modules)
    assert house_metrics.import_cycles(edges) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
    assert any(e.source == "pkg.b" and e.target == "pkg.a" and e.function_level for e in edges)


def test_no_import_runs_backwards_up_the_pipeline():
    """Each module imports only its own package and the packages below it in the declared layers
    (shared types, discover, parse, validate, config, cache, archive, resolve, index, memory, emit,
    sources, build, bundle, cli): a reader of a stage never has to read a later one."""
    edges = house_metrics.import_graph()
    assert not house_metrics.layer_violations(edges), "\n".join(house_metrics.layer_violations(edges))
    units = {house_metrics.unit_of(m) for m in house_metrics.module_files()}
    assert {"discover", "parse", "validate", "resolve", "index", "emit", "build", "bundle", "config",
            "cli", "memory"} <= units


def test_the_layer_check_sees_a_backward_import(tmp_path):
    """A stage importing a later one (in a function too) or a package missing from the order is
    reported; an import within a package or down the layers is not."""
    pkg = tmp_path / "skillc"
    for folder in ("parse", "emit", "extra"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text("X = 1\n")
    (pkg / "parse" / "document.py").write_text("from ..model import X\ndef f():\n    from ..emit import site\n")
    (pkg / "emit" / "site.py").write_text("from ..parse import document\nfrom . import common\n")
    (pkg / "emit" / "common.py").write_text("")
    (pkg / "extra" / "thing.py").write_text("from ..model import X\n")
    edges = house_metrics.import_graph(house_metrics.module_files(tmp_path, "skillc"))
    layers = (("model",), ("parse",), ("emit",))
    assert house_metrics.layer_violations(edges, layers) == [
        "skillc.extra.thing:1: extra is in no layer",
        "skillc.parse.document:3 imports skillc.emit.site (emit is not below parse)",
    ]


def _docs_tools_missing() -> str | None:
    for module in ("mkdocs", "material", "mkdocs_click"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[docs]')"
    return None


@pytest.mark.skipif(_docs_tools_missing() is not None, reason=str(_docs_tools_missing()))
def test_project_docs_build_strictly(tmp_path):
    """`mkdocs build --strict` of skillc's own docs (mkdocs.yml, docs/): a broken link or anchor, a
    page left out of the nav or a CLI reference that cannot be read from the commands fails here."""
    out = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(PROJECT / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    cli = (out / "reference" / "cli" / "index.html").read_text("utf-8")
    for command in ("lint", "build", "serve", "import", "memory"):
        assert f"skillc {command} [OPTIONS]" in cli  # (each command's usage, from its click definition)
    assert "S304" in (out / "rules" / "index.html").read_text("utf-8")  # (the generated rule reference)


def test_readme_is_the_first_page_a_newcomer_reads():
    """The README opens with the two set-up commands, stays under 25 KB, and its links lead to pages
    that exist (the rest of the documentation is the site under docs/)."""
    readme = (PROJECT / "README.md").read_text("utf-8")
    assert readme.startswith("# skillc\n\n```bash\npython -m pip install -e . && skillc build\n"
                             "python -m pip install nox && nox -s tests\n```\n")
    assert len(readme.encode("utf-8")) <= 25 * 1024
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert links and all((PROJECT / link).exists() for link in links), links


# A path in the prose of the docs: a source module or folder, or a test file.
_NAMED_PATH = re.compile(r"(?:compiler/skillc/[A-Za-z0-9_./-]*[A-Za-z0-9_]|tests/[A-Za-z0-9_./-]+\.py)")


def test_every_source_and_test_path_the_docs_name_exists():
    """The README and docs/ name modules and tests by path (`compiler/skillc/emit/docsite/model.py`,
    `tests/unit/build/test_full_disk.py`); a move that leaves one behind sends a reader nowhere."""
    pages = [PROJECT / "README.md", *sorted((PROJECT / "docs").rglob("*.md"))]
    missing = sorted({f"{page.relative_to(PROJECT)}: {path}"
                      for page in pages for path in _NAMED_PATH.findall(page.read_text("utf-8"))
                      if not (PROJECT / path).exists() and "test_x.py" not in path})
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)
