"""Which compiled graph a node function runs inside it (`compiled.nodes[name].subgraphs`), found as
LangGraph finds it: among the values the function reaches from outside its own scope (captured
cells, the globals it names, and the values along attribute paths it loads, in nested code too).
Introspection only: a graph invoked inside a node runs as its subgraph whether found here or not."""

from __future__ import annotations

import dis
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

# Values of these exact types cannot lead to a graph: a function reaching only those needs no
# bytecode walk (a subclass is walked: it can carry attributes).
_LEAF_TYPES = frozenset(
    {int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset, type(None)}
)
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def function_nonlocals(func: Callable[..., Any]) -> list[Any]:
    """The values `func` reaches from outside its own scope: every captured cell value, the globals
    it names, and each value along an attribute path it loads (`a.b.c`: a, a.b, a.b.c). May return a
    value the function never reaches at run time; never misses one its code names."""
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
        except ValueError:
            continue  # an empty cell: a recursive def not yet bound
    values: list[Any] = list(cells.values())
    names = func.__globals__
    globals_ = {name: names[name] for name in code.co_names if name in names}
    if all(type(v) in _LEAF_TYPES for v in (*cells.values(), *globals_.values())):
        return values
    codes = [code]  # nested code objects (inner defs, lambdas, comprehensions) resolve against the same
    for current in codes:
        codes.extend(c for c in current.co_consts if isinstance(c, CodeType))
        value: Any = None
        for instruction in dis.get_instructions(current):
            if instruction.opname == "LOAD_GLOBAL":
                value = globals_.get(instruction.argval)
            elif instruction.opname == "LOAD_DEREF":
                value = cells.get(instruction.argval)
            elif instruction.opname in _ATTRIBUTE_LOADS:
                value = getattr(value, instruction.argval, None)
            else:
                value = None  # anything else ends the chain: `a, b.c` is not `a.c`
                continue
            if value is not None:
                values.append(value)
    return values


def detected_subgraph(action: Any) -> Any:
    """The first compiled graph (not one set never to checkpoint) `action` reaches, or None."""
    from agent_runtime.pregel import CompiledGraph

    for value in function_nonlocals(getattr(action, "func", None) or action):
        candidate = getattr(value, "__self__", value)  # a bound method of a graph: the graph
        if isinstance(candidate, CompiledGraph) and candidate.checkpointer is not False:
            return candidate
    return None
