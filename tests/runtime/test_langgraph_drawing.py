"""Differential tests of `get_graph()`: the same graph built with LangGraph and with agent_runtime draws
the same (node and edge order, node JSON, Mermaid), with subgraphs expanded by `xray`."""

from __future__ import annotations

import json
import operator
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict

import pytest
from conftest import LIBS

Lib = types.SimpleNamespace


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def _step(name: str) -> Callable[[S], S]:
    def run(state: S) -> S:
        return {"log": [name]}

    return run


def _route(state: S) -> Literal["b", "__end__"]:
    return "b"


def _loop_with_branch(lib: Lib) -> Any:
    """A cycle closed by a conditional edge (Literal targets, END among them) and an edge to END."""
    g = lib.StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, _step(name))
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", _route)
    g.add_edge("b", "c")
    g.add_edge("c", "a")
    return g.compile(interrupt_before=["c"])


def _fan_in(lib: Lib) -> Any:
    """A join (waiting edge), a labelled path map and a deferred node."""
    g = lib.StateGraph(S)
    for name in ("up", "left", "right", "join", "late"):
        g.add_node(name, _step(name), defer=name == "late")
    g.add_edge(lib.START, "up")
    g.add_edge("up", "left")
    g.add_edge("up", "right")
    g.add_edge(["left", "right"], "join")
    g.add_conditional_edges("join", lambda s: "go", {"go": "late", "stop": lib.END})
    g.add_edge("late", lib.END)
    return g.compile()


def _nested(lib: Lib) -> Any:
    """A compiled subgraph as a node: one node, or its own nodes with xray."""
    inner = lib.StateGraph(S)
    inner.add_node("x", _step("x"))
    inner.add_node("y", _step("y"))
    inner.add_edge(lib.START, "x")
    inner.add_edge("x", "y")
    outer = lib.StateGraph(S)
    outer.add_node("first", _step("first"))
    outer.add_node("inner", inner.compile())
    outer.add_edge(lib.START, "first")
    outer.add_edge("first", "inner")
    return outer.compile()


def _drawings(app: Any) -> tuple[str, str, str]:
    plain = app.get_graph()
    return (
        json.dumps(plain.to_json(), indent=2),
        plain.draw_mermaid(with_styles=False),
        app.get_graph(xray=True).draw_mermaid(),
    )


@pytest.mark.parametrize("build", [_loop_with_branch, _fan_in, _nested])
def test_a_graph_draws_as_langgraph_draws_it(build: Callable[[Lib], Any]) -> None:
    theirs = _drawings(build(LIBS["langgraph"]()))
    ours = _drawings(build(LIBS["agent_runtime"]()))
    assert ours == theirs


def test_a_graph_composes_with_a_runnable() -> None:
    """`graph | runnable` is a Runnable sequence (LangGraph's graphs are Runnables)."""
    from langchain_core.runnables import RunnablePassthrough

    results = []
    for lib in (LIBS["langgraph"](), LIBS["agent_runtime"]()):
        chain = _nested(lib) | RunnablePassthrough()
        results.append((chain.invoke({"log": []}), [*chain.stream({"log": []})]))
    assert results[1] == results[0]
