"""Finding the compiled graph a node's function invokes (`sub.invoke(...)` inside a node), as LangGraph
detects it: the graph is the node's subgraph for `get_state(subgraphs=True)`, the namespaces state
methods accept and `get_subgraphs()`. Read from the function's closure, the globals it names and the
attribute paths it loads (its bytecode, so a function without a source file is read too); done once,
when the graph is compiled."""

from __future__ import annotations

import dis
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

from agent_runtime.pregel.compiled import CompiledGraph

# Values that cannot lead on to a graph: when a function reaches nothing else, its bytecode is not read.
# Matched by exact type (a subclass of a builtin can carry attributes).
_LEAF_TYPES = frozenset(
    {int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset, type(None)}
)
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def function_nonlocals(func: Callable[..., Any]) -> list[Any]:
    """The values `func` reaches from outside its own scope: its captured cells, the globals it names,
    and each value along an attribute path it loads (LangGraph's `get_function_nonlocals`). Errs on the
    side of more: a value can come back that the function never reaches when it runs."""
    func = getattr(func, "__func__", func)  # a bound method: its function
    wrapped = getattr(func, "__wrapped__", None)
    if callable(wrapped):
        func = getattr(wrapped, "__func__", wrapped)
    if not isinstance(func, FunctionType):
        return []
    code = func.__code__
    cells: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=False):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # an empty cell: a variable assigned after the def, not yet bound
            continue
    values = list(cells.values())
    named_globals = {name: func.__globals__[name] for name in code.co_names if name in func.__globals__}
    if all(type(v) in _LEAF_TYPES for v in (*cells.values(), *named_globals.values())):
        return values
    codes = [code]
    for current in codes:  # nested defs, lambdas and comprehensions resolve against the same names
        codes.extend(const for const in current.co_consts if isinstance(const, CodeType))
        values.extend(_attribute_paths(current, named_globals, cells))
    return values


def _attribute_paths(code: CodeType, named_globals: dict[str, Any], cells: dict[str, Any]) -> list[Any]:
    """Each value along the `name.attr.attr` chains `code` loads, starting at a global or a cell."""
    found: list[Any] = []
    value: Any = None
    for instruction in dis.get_instructions(code):
        opname = instruction.opname
        if opname == "LOAD_GLOBAL":
            value = named_globals.get(instruction.argval)
        elif opname == "LOAD_DEREF":
            value = cells.get(instruction.argval)
        elif opname in _ATTRIBUTE_LOADS:
            value = getattr(value, instruction.argval, None)
        else:
            value = None  # anything else ends the chain: `a, b.c` is not `a.c`
            continue
        if value is not None:
            found.append(value)
    return found


def invoked_subgraph(func: Callable[..., Any] | None) -> CompiledGraph | None:
    """The first compiled graph `func` reaches (one compiled with `checkpointer=False` does not count:
    it keeps no state to show)."""
    if func is None:
        return None
    for value in function_nonlocals(getattr(func, "func", None) or func):  # a wrapped function's own
        value = getattr(value, "__self__", value)  # a bound method (`sub.invoke`): its graph
        if isinstance(value, CompiledGraph) and value.persistence != "off":
            return value
    return None
