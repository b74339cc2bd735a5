"""The package's layers, checked on the real import graph.

Every module under `labkit/` is parsed with `ast`; every import counts, wherever it is written
(module level, inside a function, under `if TYPE_CHECKING:`), and so does a string constant that
names a labkit submodule exactly (the lazy tables `importlib.import_module` reads).

The order, lowest first:

    core  <  record  <  grading, models  <  loop  <  experiments  <  views  <  labkit (facade, cli)

and inside `loop`, one room per concern:

    loop.engine  <  loop.control  <  loop.strategies, loop.search

- `core` (types, errors, patch, stats, paths) imports no other labkit layer.
- `record` (ledger, budget) imports core only.
- `grading` and `models` sit side by side above record: a model call is recorded and paid for,
  so models may import record; grading and models never import each other.
- `loop` may import everything below it; within it the engine imports no room above it, the
  control plane only the engine, and strategies and search never import each other; `experiments` the loop and below, `views` anything
  below, and the top-level facade (`labkit/__init__.py`, `labkit/cli.py`) anything.
A module may always import modules of its own layer.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import labkit

RANK = {
    "core": 0,
    "record": 1,
    "grading": 2,
    "models": 2,
    "loop.engine": 3.0,
    "loop.control": 3.1,
    "loop.strategies": 3.2,
    "loop.search": 3.2,
    "experiments": 4,
    "views": 5,
}
ROOMS = {"loop"}  # layers whose modules live in rooms (sub-packages), ranked one by one
TOP = {"cli", "__main__"}  # with labkit/__init__.py, the facade: above every layer
PACKAGE = Path(labkit.__file__).resolve().parent


def layer(module: str) -> str:
    """'labkit.loop.engine.steps' -> 'loop.engine'; 'labkit.views.x' -> 'views'; the facade -> 'labkit'."""
    parts = module.split(".")
    if module == "labkit" or parts[1] in TOP:
        return "labkit"
    if len(parts) == 2 and parts[1] in ROOMS:
        return "loop.engine"  # the package `labkit.loop` itself (a docstring): its lowest room
    if len(parts) > 2 and parts[1] in ROOMS:
        room = f"{parts[1]}.{parts[2]}"
        if room not in RANK:
            raise AssertionError(
                f"{module} is in no room of {parts[1]}: put it in one of "
                f"{sorted(r for r in RANK if r.startswith(parts[1] + '.'))}"
            )
        return room
    if len(parts) < 2 or parts[1] not in RANK:
        raise AssertionError(f"{module} is in no layer: put it in one of {sorted(RANK)} or name it in TOP")
    return parts[1]


def rank(module: str) -> float:
    name = layer(module)
    return len(RANK) if name == "labkit" else RANK[name]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """Every labkit module `source` imports, wherever the import is written."""
    known = set(known)
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            # `from labkit.loop import engine` imports the module labkit.loop.engine
            found.update(f"{target}.{a.name}" for a in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("labkit.")  # a lazy table's target, not the word "labkit"
        ):
            found.add(node.value)
    return {name for name in found if name in known and name != module}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return {name: imports_of(path.read_text(), name, path.name == "__init__.py", files) for name, path in files.items()}


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Each import that points up (or sideways between grading and models), as a sentence."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer(target) == layer(module):
                continue
            if rank(target) >= rank(module):
                found.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
    return found


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a loop (Tarjan's SCCs).

    A package's `__init__` is left out: `from labkit.loop import engine` names the package as
    well as the module, and a package re-exporting its own modules is not a cycle of concerns.
    """
    packages = {m for m in graph if any(other.startswith(m + ".") for other in graph)}
    edges = {m: sorted(t for t in ts if t not in packages) for m, ts in graph.items() if m not in packages}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_two_modules_import_each_other() -> None:
    assert cycles(import_graph()) == []


def test_a_cycle_is_caught_in_a_synthetic_graph() -> None:
    graph = {
        "labkit.loop.engine": {"labkit.loop.engine.engine"},  # a package naming its module: not a cycle
        "labkit.loop.engine.engine": {"labkit.loop.engine", "labkit.loop.engine.runner"},
        "labkit.loop.engine.runner": {"labkit.loop.engine.steps"},
        "labkit.loop.engine.steps": {"labkit.loop.engine.engine"},  # round a loop of three
        "labkit.core.types": set(),
        "labkit.core.errors": {"labkit.core.types"},
    }
    assert cycles(graph) == [["labkit.loop.engine.engine", "labkit.loop.engine.runner", "labkit.loop.engine.steps"]]
    graph["labkit.loop.engine.steps"] = set()
    assert cycles(graph) == []


def test_the_real_graph_points_down() -> None:
    graph = import_graph()
    assert "labkit.core.errors" in graph["labkit.loop.engine.engine"]
    assert "labkit.loop.engine.engine" in graph["labkit.loop.search.search_run"]
    assert violations(graph) == []


def test_a_violation_is_caught_in_a_synthetic_graph() -> None:
    assert violations({"labkit.core.types": {"labkit.loop.engine"}}) == [
        "labkit.core.types (core) imports labkit.loop.engine (loop.engine)"
    ]
    # the loop's rooms: the engine imports no room above it; strategies and search are side by side
    assert violations({"labkit.loop.engine.runner": {"labkit.loop.control.classify"}}) != []
    assert violations({"labkit.loop.strategies.reflector": {"labkit.loop.search.search_run"}}) != []
    assert violations({"labkit.loop.search.search_run": {"labkit.loop.strategies.rewrite"}}) != []
    assert (
        violations({"labkit.loop.search.search_run": {"labkit.loop.control.classify", "labkit.loop.engine.steps"}})
        == []
    )
    with pytest.raises(AssertionError, match="in no room"):
        violations({"labkit.loop.misc.x": {"labkit.core.types"}})
    # grading and models are side by side: neither imports the other
    assert violations({"labkit.grading.cases": {"labkit.models.gateway"}}) != []
    assert violations({"labkit.models.gateway": {"labkit.grading.validator"}}) != []
    # downwards and within a layer is fine
    assert violations({"labkit.loop.strategies.reflector": {"labkit.loop.engine", "labkit.models.gateway"}}) == []
    assert violations({"labkit": {"labkit.views.report"}}) == []
    assert violations({"labkit.cli": {"labkit.views.report", "labkit"}}) == []
    assert violations({"labkit.views.report": {"labkit.cli"}}) != []  # nothing imports the facade
    with pytest.raises(AssertionError, match="in no layer"):
        violations({"labkit.misc": {"labkit.core.types"}})


def test_function_level_and_lazy_imports_count(tmp_path: Path) -> None:
    root = tmp_path / "labkit"
    for sub in ("core", "loop"):
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "loop" / "engine.py").write_text("X = 1\n")
    (root / "core" / "types.py").write_text("def late():\n    from ..loop import engine\n    return engine\n")
    (root / "core" / "stats.py").write_text("import importlib\nLAZY = {'x': 'labkit.loop.engine'}\n")
    graph = import_graph(root)
    assert graph["labkit.core.types"] == {"labkit.loop", "labkit.loop.engine"}
    assert graph["labkit.core.stats"] == {"labkit.loop.engine"}
    assert len(violations(graph)) == 3


def test_every_exception_class_lives_in_core_errors() -> None:
    defined_elsewhere = []
    for info in pkgutil.walk_packages(labkit.__path__, "labkit."):
        if info.name in {"labkit.__main__", "labkit.core.errors"}:
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                defined_elsewhere.append(f"{info.name}.{name}")
    assert defined_elsewhere == []
