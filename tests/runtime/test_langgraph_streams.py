"""Differential tests of LangGraph's stream and state features agent_runtime added: the `"checkpoints"`
and `"tasks"` stream modes, `subgraphs=True` on stream / astream (namespaced chunks, the subgraphs'
own events) and `get_state(config, subgraphs=True)` / `aget_state` (a subgraph's state nested in its
task). Each program runs on LangGraph and on agent_runtime; what a user sees must be the same, up to
what differs by nature (ids, timestamps, checkpoint ids)."""

from __future__ import annotations

import asyncio
import operator
import types
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from conftest import LIBS

Lib = types.SimpleNamespace

# ids, times and checkpoint ids differ by nature; an interrupt's `response_schema` (LangGraph 1.2.24's
# `interrupt(value, response_schema=)`) is not part of agent_runtime's Interrupt
DROPPED = frozenset({"id", "timestamp", "checkpoint_id", "checkpoint_map", "parents", "response_schema"})


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    answer: str


def _both(program: Callable[[Lib], Any]) -> tuple[Any, Any]:
    """(LangGraph's result, agent_runtime's result) of the same program."""
    return program(LIBS["langgraph"]()), program(LIBS["agent_runtime"]())


def _ns(value: str) -> str:
    """A namespace without its task ids: "outer:<id>|inner:<id>" -> "outer|inner"."""
    return "|".join(part.split(":")[0] for part in value.split("|"))


def _norm(value: Any) -> Any:
    """`value` without what differs by nature; snapshots and tasks as plain tuples of what they show."""
    kind = type(value).__name__
    if kind == "StateSnapshot":
        return ("snapshot", _norm(value.values), value.next, _norm(value.config), _norm(list(value.tasks)))
    if kind == "PregelTask":
        return ("task", value.name, value.path, value.error, _norm(value.interrupts), _norm(value.state), value.result)
    if kind == "Interrupt":
        return ("Interrupt", _norm(value.value))
    if isinstance(value, dict):
        return {
            k: _ns(v) if k == "checkpoint_ns" else _norm(v)
            for k, v in value.items()
            if k not in DROPPED and not (k == "interrupts" and not v)
        }
    if isinstance(value, list | tuple):
        if len(value) and all(isinstance(v, str) and ":" in v for v in value):  # a stream namespace
            return tuple(_ns(v) for v in value)
        return type(value)(_norm(v) for v in value)
    return value


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# -- 1. stream_mode "checkpoints" and "tasks" ------------------------------------------------------------
def _checkpoints_and_tasks(lib: Lib) -> Any:
    def fail(state: S) -> dict[str, Any]:
        raise ValueError("boom")

    g = lib.StateGraph(S)
    g.add_node("one", lambda s: {"log": ["one"]})
    g.add_node("ask", lambda s: {"answer": lib.interrupt("q?")})
    g.add_node("fail", fail)
    g.add_edge(lib.START, "one")
    g.add_edge("one", "ask")
    g.add_edge("ask", "fail")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("ct")
    runs = [
        list(app.stream({"log": []}, cfg, stream_mode=["checkpoints", "tasks", "updates"])),
        list(g.compile().stream({"log": []}, stream_mode="tasks")),  # no checkpointer: no checkpoints
    ]
    chunks: list[Any] = []
    try:
        chunks.extend(app.stream(lib.Command(resume="a"), cfg, stream_mode="checkpoints"))
    except ValueError as exc:
        chunks.append(str(exc))
    runs.append(chunks)
    return _norm(runs)


def test_checkpoints_and_tasks_stream_modes_are_shaped_as_langgraph() -> None:
    theirs, ours = _both(_checkpoints_and_tasks)
    assert ours == theirs
    assert {mode for mode, _ in ours[0]} == {"checkpoints", "tasks", "updates"}


# -- 2. subgraphs=True --------------------------------------------------------------------------------------
def _nested(lib: Lib, *, checkpointer: bool) -> Any:
    """parent: first -> child (compiled node: grandchild -> leaf) -> caller (invokes `called` inside)."""

    def leaf(state: S, writer) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        writer({"leaf": True})
        return {"log": ["leaf"]}

    grand = lib.StateGraph(S)
    grand.add_node("leaf", leaf)
    grand.add_edge(lib.START, "leaf")

    child = lib.StateGraph(S)
    child.add_node("grandchild", grand.compile())
    child.add_node("after", lambda s: {"log": ["after"]})
    child.add_edge(lib.START, "grandchild")
    child.add_edge("grandchild", "after")

    called = lib.StateGraph(S)
    called.add_node("inside", lambda s: {"answer": "inside"})
    called.add_edge(lib.START, "inside")
    called_app = called.compile()

    g = lib.StateGraph(S)
    g.add_node("first", lambda s: {"log": ["first"]})
    g.add_node("child", child.compile())
    g.add_node("caller", lambda s: {"answer": called_app.invoke({"log": []})["answer"]})
    g.add_edge(lib.START, "first")
    g.add_edge("first", "child")
    g.add_edge("child", "caller")
    return g.compile(checkpointer=lib.MemorySaver()) if checkpointer else g.compile()


def _subgraph_streams(lib: Lib) -> Any:
    out = []
    for checkpointer in (True, False):
        app = _nested(lib, checkpointer=checkpointer)
        cfg = _cfg("sub") if checkpointer else None
        out.append(list(app.stream({"log": []}, cfg, subgraphs=True)))
        out.append(list(app.stream({"log": []}, cfg, stream_mode=["updates", "values", "custom"], subgraphs=True)))
        out.append(list(app.stream({"log": []}, cfg, stream_mode="updates", subgraphs=False)))

    async def astream() -> list[Any]:
        app = _nested(lib, checkpointer=False)
        return [chunk async for chunk in app.astream({"log": []}, stream_mode="custom", subgraphs=True)]

    out.append(asyncio.run(astream()))
    return _norm(out)


def test_subgraphs_true_streams_namespaced_chunks_as_langgraph() -> None:
    theirs, ours = _both(_subgraph_streams)
    assert ours == theirs
    assert (("child", "grandchild"), {"leaf": {"log": ["leaf"]}}) in ours[0]


def _subgraph_interrupt_stream(lib: Lib) -> Any:
    inner = lib.StateGraph(S)
    inner.add_node("ask", lambda s: {"answer": lib.interrupt("name?")})
    inner.add_edge(lib.START, "ask")
    g = lib.StateGraph(S)
    g.add_node("inner", inner.compile())
    g.add_edge(lib.START, "inner")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("si")
    first = list(app.stream({"log": []}, cfg, subgraphs=True))
    second = list(app.stream(lib.Command(resume="bob"), cfg, stream_mode=["updates", "checkpoints"], subgraphs=True))
    return _norm([first, second])


def test_subgraphs_true_streams_a_subgraph_interrupt_and_resume_as_langgraph() -> None:
    theirs, ours = _both(_subgraph_interrupt_stream)
    assert ours == theirs


# -- 3. get_state(subgraphs=True) ---------------------------------------------------------------------------
def _nested_state(lib: Lib) -> Any:
    grand = lib.StateGraph(S)
    grand.add_node("ask", lambda s: {"answer": lib.interrupt("deep?"), "log": ["ask"]})
    grand.add_edge(lib.START, "ask")
    child = lib.StateGraph(S)
    child.add_node("pre", lambda s: {"log": ["pre"]})
    child.add_node("grandchild", grand.compile())
    child.add_edge(lib.START, "pre")
    child.add_edge("pre", "grandchild")
    g = lib.StateGraph(S)
    g.add_node("child", child.compile())
    g.add_edge(lib.START, "child")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("ns")
    app.invoke({"log": []}, cfg)
    states = [app.get_state(cfg), app.get_state(cfg, subgraphs=True), asyncio.run(app.aget_state(cfg, subgraphs=True))]
    app.invoke(lib.Command(resume="x"), cfg)
    states.append(app.get_state(cfg, subgraphs=True))
    return _norm(states)


def test_get_state_with_subgraphs_nests_their_state_as_langgraph() -> None:
    theirs, ours = _both(_nested_state)
    assert ours == theirs
    nested = ours[1][4][0][5]  # the child task's state: the child's snapshot, with the grandchild's inside
    assert nested[0] == "snapshot" and nested[4][0][5][0] == "snapshot"
