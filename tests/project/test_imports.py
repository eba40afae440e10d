"""Imports run one way: the module graph of the package, read from the source, has no cycle.

Every ``import`` counts, at the top of a module or inside a function: an import moved into a function
to dodge a cycle is still a cycle. The graph holds trackerlab's own modules only, so the lazy imports of
optional libraries (matplotlib, ipywidgets, networkx, IPython, dask) never enter it. Where a lower
module needs something of a higher one, it names it by one mechanism, a placeholder that ``core.late.bind``
replaces once the modules are loaded (``TrackedReal = Later("core.tracked", "TrackedReal")``); each module
imports on its own, in a fresh interpreter.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "trackerlab"


def modules(root: pathlib.Path = PACKAGE) -> dict[str, pathlib.Path]:
    """Every module of the package by dotted name (a package by its own name, not ``__init__``)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    """The package's modules that one import statement loads (``from . import x`` loads the module
    ``x`` when there is one, else the package that defines the name ``x``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parent = module.split(".") if is_package else module.split(".")[:-1]
            parent = parent[: len(parent) - node.level + 1]
            base = ".".join(parent + ([node.module] if node.module else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    out = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.append(name)
    return out


def import_graph(root: pathlib.Path = PACKAGE) -> dict[str, dict[str, int]]:
    """``{module: {imported module: line}}`` for every import statement anywhere in each module."""
    known = modules(root)
    graph: dict[str, dict[str, int]] = {name: {} for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(name, path.name == "__init__.py", node, known):
                    graph[name].setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph, component) -> str:
    edges = [f"{a} → {b} (line {line})" for a in component for b, line in graph[a].items() if b in component]
    return "\n  ".join(edges)


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40 and "trackerlab.rules.shape" in graph["trackerlab.rules.reductions"]
    found = cycles(graph)
    assert not found, "import cycles:\n  " + "\n\n  ".join(_describe(graph, c) for c in found)


def test_the_engine_never_imports_the_notebook_layer():
    """Only the package itself (its lazy ``__getattr__``, the HTML repr it hands to ``presentation.text``) reaches up."""
    graph = import_graph()
    engine = [m for m in graph if not m.startswith("trackerlab.notebook") and m != "trackerlab"]
    wrong = [f"{m} → {t}" for m in engine for t in graph[m] if t.startswith("trackerlab.notebook")]
    assert not wrong


@pytest.mark.parametrize(
    ("source", "cyclic"),
    [
        ({"a": "from . import b", "b": "x = 1"}, False),
        ({"a": "from . import b", "b": "def f():\n    from . import a"}, True),  # inside a function too
        ({"a": "from .b import x", "b": "from .c import y", "c": "import pkg.a"}, True),
        ({"a": "from . import b", "b": "from .c import y", "c": "import math"}, False),
    ],
)
def test_the_checker_sees_cycles(tmp_path, source, cyclic):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in source.items():
        (package / f"{name}.py").write_text(text + "\n")
    found = cycles(import_graph(package))
    assert bool(found) is cyclic, found


def _engine_modules_imported(name: str, path) -> list[str]:
    """The engine modules that the notebook module ``name`` (at ``path``) imports, as dotted names."""
    package = name.split(".")[:-1] if path.name != "__init__.py" else name.split(".")
    known = modules()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.append(module)
            found += [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known]
    return [m for m in found if m.startswith("trackerlab") and not m.startswith("trackerlab.notebook")]


def test_the_notebook_layer_imports_only_public_engine_modules():
    """It reads the engine's public modules (``trackerlab.presentation``, ``trackerlab.core.tracked``, …), never
    a private one (a module whose dotted name has a part starting with ``_``); the stepper drives the walk
    through ``core.walk.steps_for``, so that it shows the engine's own steps (DESIGN: one walk)."""
    wrong = []
    for name, path in modules().items():
        if name.startswith("trackerlab.notebook"):
            for module in _engine_modules_imported(name, path):
                if any(part.startswith("_") for part in module.split(".")):
                    wrong.append(f"{name} imports {module}")
    assert not wrong


def test_the_notebook_import_check_sees_a_private_module(tmp_path, monkeypatch):
    """The check resolves relative imports, so a private engine module imported by the notebook is seen."""
    path = tmp_path / "drawing.py"
    path.write_text("from ..rules._util import shape\nfrom ..presentation import text\n")
    found = _engine_modules_imported("trackerlab.notebook.drawing", path)
    assert "trackerlab.rules._util" in found and "trackerlab.presentation.text" in found


def test_every_placeholder_is_bound_once_the_package_is_loaded():
    """Every ``core.late.Later`` of the engine's modules is replaced by the object it names when ``trackerlab`` is
    imported (the notebook layer's HTML repr, whose module loads on first use, is the one that waits), so the
    code using them pays nothing for the indirection."""
    import importlib

    import trackerlab
    from trackerlab.core.late import Later

    waiting = []
    for name in modules():
        if name.startswith("trackerlab.notebook") or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        waiting += [f"{name}.{n} → {v.module}" for n, v in vars(module).items() if type(v) is Later]
    assert waiting == ["trackerlab.presentation.text.html_repr → notebook.html"]
    from trackerlab.core import tape, tracked
    from trackerlab.rules import _util, indexing, reductions, shape

    assert _util.sum is reductions.sum and shape.getitem is indexing.getitem
    assert tape.TrackedArray is tracked.TrackedArray and tape._real_new is tracked.TrackedReal.__new__
    assert "<table" in trackerlab.param([1.0, 2.0])._repr_html_() or "tl-repr" in trackerlab.param(1.0)._repr_html_()


def test_the_only_late_binding_is_core_late():
    """No module hands objects down by other means: no assignment into another module's globals
    (``module.NAME = …``, ``setattr(module, …)``, ``globals()[…]`` of another module), no ``Later`` of its own,
    no operation looked up by its name in the registry (``operations()["sum"]``)."""
    wrong = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported_modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):  # (from a package: its modules, or other names)
                imported_modules |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "Later" and name != "trackerlab.core.late":
                wrong.append(f"{name}: a Later class of its own")
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in imported_modules
                        and target.attr.isupper()
                    ):
                        wrong.append(f"{name}, line {node.lineno}: sets {target.value.id}.{target.attr}")
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "operations"
                and isinstance(node.slice, ast.Constant)
            ):
                wrong.append(f"{name}, line {node.lineno}: operations()[{node.slice.value!r}]")
    assert not wrong, "\n".join(wrong)


_IMPORT_EACH = """
import os, sys
import numpy  # (not the package's: preloaded so that each child imports trackerlab alone)
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:  # a child with nothing of trackerlab loaded yet
        try:
            __import__(name)
        except BaseException as error:
            print(f"{name}: {type(error).__name__}: {error}", flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:
        failed.append(name)
print("failed:", failed)
sys.exit(1 if failed else 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="imports each module in a forked interpreter")
@pytest.mark.slow
def test_each_module_imports_on_its_own():
    """Each module of the package imports in an interpreter where nothing of trackerlab is loaded (as
    ``python -X importtime -c "import trackerlab.core.tape"`` would): no module depends on another being imported
    first."""
    names = sorted(n for n in modules() if not n.endswith("__main__"))
    root = str(PACKAGE.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, *names], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
