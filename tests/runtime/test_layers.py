"""agent_runtime's layers import only downward and no module imports itself back through others (issue 31,
item 4): every import counts, module level, inside a function or under TYPE_CHECKING, as a reader follows
them; `from package import submodule` reads the submodule (as `import package.submodule` does).

LAYERS below is the architecture (docs/runtime.md, "Layout"), bottom to top; LangGraph-named modules
that re-export from several layers (the package itself, `types`) are faces on top, and the other
LangGraph paths are real modules of their layer or faces within it."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_runtime

ROOT = Path(agent_runtime.__file__).parent
PACKAGE = "agent_runtime"

# (layer, what it holds, its modules: each a module or a package with everything under it), bottom to top
LAYERS: list[tuple[str, str, tuple[str, ...]]] = [
    ("guard", "the loop guard: its own package, which the engine and the gateway use", ("agent_runtime.guard",)),
    (
        "core",
        "the values a graph holds: types, errors, reserved names, channels, state schemas, config keys",
        (
            "agent_runtime.core",
            "agent_runtime.errors",
            "agent_runtime.constants",
            "agent_runtime.channels",
            "agent_runtime.callbacks",
            "agent_runtime.managed",
            "agent_runtime.warnings",
            "agent_runtime.typing",
        ),
    ),
    ("checkpoint", "the saver interface, our savers, serde, LangGraph's savers adapted", ("agent_runtime.checkpoint",)),
    (
        "engine",
        "the superstep engine: topology, tasks, the loop, the runtime a node sees, the callback streams",
        ("agent_runtime.engine", "agent_runtime.streaming", "agent_runtime.runtime", "agent_runtime.config"),
    ),
    ("stream", "the v2/v3 stream protocol over a run's events", ("agent_runtime.stream",)),
    (
        "graph",
        "the compiled graph and the graph and functional APIs that build one",
        ("agent_runtime.pregel", "agent_runtime.graph", "agent_runtime.func"),
    ),
    ("prebuilt", "agents built on the graph API", ("agent_runtime.prebuilt",)),
    (
        "faces",
        "LangGraph-named modules that re-export from several layers",
        ("agent_runtime", "agent_runtime.types", "agent_runtime.pregel.types"),
    ),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in ROOT.rglob("*.py")}


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
            names = len(submodules) < len(node.names)  # some are names defined by `base` itself
            candidates = [*submodules, *([base] if names else [])]
        else:
            continue
        for target in candidates:
            if target in known and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def layer_of(module: str) -> int:
    """The index in LAYERS of the longest entry naming `module` (the package itself only by name)."""
    best, best_len = -1, -1
    for index, (_, _, entries) in enumerate(LAYERS):
        for entry in entries:
            names = module == entry or (entry != PACKAGE and module.startswith(entry + "."))
            if names and len(entry) > best_len:
                best, best_len = index, len(entry)
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
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


def test_every_module_has_a_layer() -> None:
    assert [name for name in sorted(modules()) if layer_of(name) < 0] == []


def test_imports_go_only_downward() -> None:
    upward = [
        f"{source} ({LAYERS[layer_of(source)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(source)
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_checker_sees_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The checks can fail: a cycle, one closed by an import under TYPE_CHECKING (the engine's helpers
    once named the loop's Run so), and an import from a lower layer up."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    loop, helper = tmp_path / "loop.py", tmp_path / "helper.py"
    loop.write_text("from pkg.helper import work\n")
    helper.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.loop import Run\n")
    known = {"pkg.loop": loop, "pkg.helper": helper}
    assert cycles({name: imported(name, path, known) for name, path in known.items()}) == [["pkg.helper", "pkg.loop"]]
    assert layer_of("agent_runtime.core.types") < layer_of("agent_runtime.engine.loop") < layer_of(PACKAGE)
