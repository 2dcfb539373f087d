"""House metrics of compiler/skillc (issue 18): what a reviewer checks about the shape of the code.

    python scripts/house_metrics.py            # a report on standard output
    python scripts/house_metrics.py --json     # the same figures as JSON

Prints the import cycles among skillc's modules (module-level and function-level imports alike:
a function-level import only hides a cycle, it does not remove it), the functions over 80 lines,
the README's size and the number of function-level imports. ``tests/test_house.py`` imports
``import_graph`` and ``import_cycles`` from here, so the check and the report count the same way.

The graph is read with ``ast`` (no module is imported, so a cycle that would fail at import time
is still reported). An edge ``a -> b`` means a module ``a`` names ``b`` in an import statement;
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``. A
package's ``__init__`` being run before its submodules is not an edge: every package would
otherwise form a cycle with each submodule that its ``__init__`` imports.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE_ROOT = PROJECT / "compiler"
PACKAGE = "skillc"
LONG_FUNCTION = 80


@dataclass(frozen=True)
class ImportEdge:
    source: str  # the importing module, dotted
    target: str  # the imported skillc module, dotted
    line: int
    function_level: bool  # inside a def (or a class body within one)


@dataclass(frozen=True)
class LongFunction:
    qualname: str  # module:Class.function
    lines: int


def module_files(root: Path = PACKAGE_ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, not '.__init__')."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The dotted name a (possibly relative) ``from … import`` names."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    # a package's own module is its __init__, so one level up from it is the package itself
    keep = len(base) - node.level + (1 if is_package else 0)
    prefix = base[:keep]
    return ".".join(prefix + ([node.module] if node.module else []))


def _targets(node: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = _absolute(module, is_package, node)
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                 for alias in node.names]
    found = []
    for name in names:
        # `import skillc.a.b` names skillc.a.b; a name that is not a module is its nearest module
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name not in found:
            found.append(name)
    return found


def _imports(tree: ast.Module) -> list[tuple[ast.AST, bool]]:
    """Every import statement with whether it sits inside a function."""
    found: list[tuple[ast.AST, bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, in_function))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            walk(child, inner)

    walk(tree, False)
    return found


def import_graph(modules: dict[str, Path] | None = None) -> list[ImportEdge]:
    """Every import among the package's modules, in module and line order."""
    modules = module_files() if modules is None else modules
    edges = []
    for module, path in modules.items():
        tree = ast.parse(path.read_bytes(), str(path))
        is_package = path.name == "__init__.py"
        for node, in_function in _imports(tree):
            for target in _targets(node, module, is_package, modules):
                if target != module:
                    edges.append(ImportEdge(module, target, node.lineno, in_function))
    return edges


def import_cycles(edges: list[ImportEdge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, in order."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        # recursive Tarjan: the graph has a few hundred modules, far below the recursion limit
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(components)


def cycle_edges(edges: list[ImportEdge], component: list[str]) -> list[ImportEdge]:
    """The imports that tie one cycle together (what to break)."""
    members = set(component)
    return [e for e in edges if e.source in members and e.target in members]


# The layers of compiler/skillc, bottom first (issue 18): a module may import its own unit (the
# top-level module or package it belongs to) and any unit of a lower layer, never one of its own
# layer or above, so no import runs backwards up the pipeline. docs/ARCHITECTURE.md maps them.
LAYERS: tuple[tuple[str, ...], ...] = (
    # shared types and helpers every stage may use (the bottom)
    ("activecontent", "textscan"),  # what a static host runs as a page (the model's ID rules read it); text scans
    ("errors", "version", "formatting", "paths", "jsonio", "secrets", "resources", "layout",
     "fetch", "model"),
    ("instructions", "resolve_rules"),  # seed 000's IDs of lightweight and convention files; the R1xx codes
    ("parallel", "resolve_types", "flatnames"),
    ("locks",),
    # the stages, in pipeline order, with what they lean on in between
    ("discover",),
    ("parse",),
    ("validate",),
    ("config",),   # reads lint settings into validate's LintConfig
    ("cache",),    # parse, lint, render and search-index records: read by sources, index, emit, build
    ("archive",),  # zip reading and writing: the emitter, memory, sources and import use it
    ("resolve",),
    ("index",),
    ("memory",),   # an emitter of its own (api/memory/), and the docs site searches it
    ("gate",),     # the publishing gate: strict redaction before emit, the last check of every byte
    ("emit",),
    ("exports",),  # export targets (folders, marketplace, well-known) built from emit's archives
    ("sources",),  # repositories read with lint, cache, config; a remote bundle with emit's rules
    ("build",),
    ("bundle",),   # readers of a built bundle: Bundle, the server
    ("mcp_server",),  # agents read a bundle over MCP
    ("cli",),
    ("skillc", "__main__"),  # the package's lazy facade and `python -m skillc`
)


def unit_of(module: str) -> str:
    """The layer unit of a dotted module: ``skillc.emit.render.adk`` -> ``emit``; ``skillc`` -> ``skillc``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(edges: list[ImportEdge], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Each import of a unit that is not below the importer's own layer (other than its own unit),
    and each unit missing from ``layers``, as text naming module, line and target."""
    rank = {unit: level for level, units in enumerate(layers) for unit in units}
    found = []
    for e in edges:
        source, target = unit_of(e.source), unit_of(e.target)
        if source not in rank or target not in rank:
            found.append(f"{e.source}:{e.line}: {source if source not in rank else target} is in no layer")
        elif source != target and rank[target] >= rank[source]:
            found.append(f"{e.source}:{e.line} imports {e.target} ({target} is not below {source})")
    return sorted(set(found))


def long_functions(modules: dict[str, Path] | None = None, limit: int = LONG_FUNCTION) -> list[LongFunction]:
    """Functions (methods and nested functions too) longer than ``limit`` lines, longest first."""
    modules = module_files() if modules is None else modules
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_bytes(), str(path))
        found += _long_in(tree, f"{module}:", limit)
    return sorted(found, key=lambda f: (-f.lines, f.qualname))


def _long_in(node: ast.AST, prefix: str, limit: int) -> list[LongFunction]:
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                length = child.end_lineno - first + 1
                if length > limit:
                    found.append(LongFunction(name, length))
            found += _long_in(child, name + ".", limit)
        else:
            found += _long_in(child, prefix, limit)
    return found


def metrics() -> dict:
    modules = module_files()
    edges = import_graph(modules)
    cycles = import_cycles(edges)
    return {
        "modules": len(modules),
        "import_cycles": [
            {"modules": c, "imports": [f"{e.source}:{e.line} -> {e.target}" for e in cycle_edges(edges, c)]}
            for c in cycles],
        "layer_violations": layer_violations(edges),
        "functions_over_80_lines": [{"function": f.qualname, "lines": f.lines} for f in long_functions(modules)],
        "readme_bytes": (PROJECT / "README.md").stat().st_size,
        "function_level_imports": sum(1 for n, inside in _all_imports(modules) if inside),
        "function_level_imports_of_skillc": sum(1 for e in edges if e.function_level),
    }


def _all_imports(modules: dict[str, Path]) -> list[tuple[ast.AST, bool]]:
    found = []
    for path in modules.values():
        found += _imports(ast.parse(path.read_bytes(), str(path)))
    return found


def _print(report: dict) -> None:
    print(f"modules: {report['modules']}")
    print(f"import cycles: {len(report['import_cycles'])}")
    for cycle in report["import_cycles"]:
        print("  " + " <-> ".join(cycle["modules"]))
        for edge in cycle["imports"]:
            print(f"      {edge}")
    print(f"imports against the layers: {len(report['layer_violations'])}")
    for violation in report["layer_violations"]:
        print(f"  {violation}")
    print(f"functions over {LONG_FUNCTION} lines: {len(report['functions_over_80_lines'])}")
    for func in report["functions_over_80_lines"]:
        print(f"  {func['lines']:4d}  {func['function']}")
    print(f"README.md: {report['readme_bytes']:,} bytes")
    print(f"function-level imports: {report['function_level_imports']} "
          f"({report['function_level_imports_of_skillc']} of skillc modules)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    report = metrics()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        _print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
