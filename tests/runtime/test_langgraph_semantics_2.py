"""Differential tests of LangGraph semantics: time travel, subgraphs (static breakpoints, resumes by
interrupt id, graphs invoked inside a node), get_state_history and stream shapes. Each program runs on
LangGraph (with InMemorySaver) and on agent_runtime (with InMemoryCheckpointer); what a user sees
(outputs, streams, get_state, history) must be the same."""

from __future__ import annotations

import asyncio
import operator
import types
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest
from conftest import LIBS

Lib = types.SimpleNamespace


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    answer: str


def _both(program: Callable[[Lib], Any]) -> tuple[Any, Any]:
    """(LangGraph's result, agent_runtime's result) of the same program."""
    return program(LIBS["langgraph"]()), program(LIBS["agent_runtime"]())


def _plain(value: Any) -> Any:
    """Interrupts by value (their ids differ between the libraries), everything else as is."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", _plain(value.value))
    return value


def _history(app: Any, cfg: dict[str, Any]) -> list[Any]:
    return [
        (h.metadata["step"], h.metadata["source"], h.next, h.values, [(t.name, t.result) for t in h.tasks])
        for h in app.get_state_history(cfg)
    ]


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# -- 1. a run from an earlier checkpoint forks the thread -------------------------------------------------
def _ask_graph(lib: Lib) -> Any:
    g = lib.StateGraph(S)
    g.add_node("pre", lambda s: {"log": ["pre"]})
    g.add_node("ask", lambda s: {"answer": lib.interrupt("q?"), "log": ["ask"]})
    g.add_node("post", lambda s: {"log": ["post:" + s["answer"]]})
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "ask")
    g.add_edge("ask", "post")
    return g.compile(checkpointer=lib.MemorySaver())


def _replay(lib: Lib) -> Any:
    app, cfg = _ask_graph(lib), _cfg("replay")
    first = app.invoke({"log": []}, cfg)
    done = app.invoke(lib.Command(resume="a"), cfg)
    before_ask = next(h for h in app.get_state_history(cfg) if h.next == ("ask",))
    replayed = app.invoke(None, before_ask.config)
    asked_again = replayed["__interrupt__"][0].id != first["__interrupt__"][0].id
    resumed = app.invoke(lib.Command(resume="b"), cfg)
    history = [h[:4] for h in _history(app, cfg)]
    return _plain([first, done, replayed, asked_again, resumed, app.get_state(cfg).values, history])


def test_a_replay_forks_and_asks_its_interrupts_again() -> None:
    theirs, ours = _both(_replay)
    assert ours == theirs
    assert ours[2]["__interrupt__"] == [("Interrupt", "q?")] and ours[3] is True  # not the old answer "a"
    assert ours[4]["log"] == ["pre", "ask", "post:b"]  # the resume continues the new branch


# -- 5. get_state_history shows what each task wrote, __start__ included ------------------------------------
def _two_lanes(lib: Lib) -> Any:
    g = lib.StateGraph(S)
    for name in "abcd":
        g.add_node(name, lambda s, name=name: {"log": [name]})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge("a", "c")
    g.add_edge("b", "d")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("history")
    app.invoke({"log": ["x"], "answer": "y"}, cfg)
    return _history(app, cfg)


def test_history_shows_task_results_as_langgraph() -> None:
    theirs, ours = _both(_two_lanes)
    assert ours == theirs
    assert ours[-1][-1] == [("__start__", {"log": ["x"], "answer": "y"})]


# -- 2. a static breakpoint compiled into a subgraph pauses the parent ------------------------------------
def _breakpoint_in_subgraph(lib: Lib) -> Any:
    inner = lib.StateGraph(S)
    inner.add_node("i1", lambda s: {"log": ["i1"]})
    inner.add_node("i2", lambda s: {"log": ["i2"]})
    inner.add_edge(lib.START, "i1")
    inner.add_edge("i1", "i2")
    g = lib.StateGraph(S)
    g.add_node("sub", inner.compile(interrupt_before=["i2"]))
    g.add_node("tail", lambda s: {"log": ["tail"]})  # a sibling that finishes in the paused step
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(lib.START, "sub")
    g.add_edge(lib.START, "tail")
    g.add_edge("sub", "after")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("breakpoint")
    paused = list(app.stream({"log": []}, cfg, stream_mode="values"))
    state = app.get_state(cfg)
    paused_state = (state.values, state.next, [(t.name, t.result) for t in state.tasks])
    return [paused, paused_state, app.invoke(None, cfg), app.get_state(cfg).next]


def test_a_breakpoint_inside_a_subgraph_pauses_the_parent() -> None:
    theirs, ours = _both(_breakpoint_in_subgraph)
    assert ours == theirs
    assert ours[1][1] == ("sub",) and ours[2]["log"] == ["i1", "i2", "tail", "after"]


# -- 3. resuming one interrupt by id across parallel Send subgraph tasks ----------------------------------
class Topic(S, total=False):
    topic: str


def _send_subgraphs(lib: Lib) -> Any:
    inner = lib.StateGraph(Topic, output_schema=S)
    inner.add_node("ask", lambda s: {"log": [s["topic"] + ":" + lib.interrupt(s["topic"])]})
    inner.add_edge(lib.START, "ask")
    g = lib.StateGraph(S)
    g.add_node("sub", inner.compile())
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("sub", {"topic": t, "log": []}) for t in "xy"])
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("by-id")
    ids = {i.value: i.id for i in app.invoke({"log": []}, cfg)["__interrupt__"]}
    first = app.invoke(lib.Command(resume={ids["x"]: "X"}), cfg)  # y is not answered: it asks again
    state = app.get_state(cfg)
    second = app.invoke(lib.Command(resume={ids["y"]: "Y"}), cfg)
    return [sorted(ids), _plain(first), state.values, state.next, second]


def test_a_resume_by_id_answers_only_its_own_subgraph_task() -> None:
    theirs, ours = _both(_send_subgraphs)
    assert ours == theirs
    assert ours[1] == {"log": ["x:X"], "__interrupt__": [("Interrupt", "y")]} and ours[-1] == {"log": ["x:X", "y:Y"]}


# -- 4. a graph invoked inside a node runs on the parent's thread -------------------------------------------
def _invoked_inside(lib: Lib, is_async: bool) -> Any:
    inner = lib.StateGraph(S)
    inner.add_node("i1", lambda s: {"log": ["i1"]})
    inner.add_node("ask", lambda s: {"log": ["ask:" + lib.interrupt("q")]})
    inner.add_edge(lib.START, "i1")
    inner.add_edge("i1", "ask")
    sub = inner.compile()  # no checkpointer: it inherits the parent's, and its thread
    calls: list[str] = []

    def outer(state: S) -> dict[str, Any]:
        calls.append("outer")
        return {"log": sub.invoke({"log": []})["log"]}

    async def aouter(state: S) -> dict[str, Any]:
        calls.append("outer")
        return {"log": (await sub.ainvoke({"log": []}))["log"]}

    g = lib.StateGraph(S)
    g.add_node("outer", aouter if is_async else outer)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(lib.START, "outer")
    g.add_edge("outer", "after")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("inside")
    run = (lambda value: asyncio.run(app.ainvoke(value, cfg))) if is_async else (lambda value: app.invoke(value, cfg))
    paused = run({"log": ["x"]})
    state = app.get_state(cfg)
    return [_plain(paused), state.next, run(lib.Command(resume="A")), calls]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_graph_invoked_inside_a_node_pauses_and_resumes_with_the_parent(is_async: bool) -> None:
    theirs, ours = _both(lambda lib: _invoked_inside(lib, is_async))
    assert ours == theirs
    assert ours[0] == {"log": ["x"], "__interrupt__": [("Interrupt", "q")]} and ours[1] == ("outer",)
    assert ours[2] == {"log": ["x", "i1", "ask:A", "after"]}


# -- 6. streams -----------------------------------------------------------------------------------------------
class Pair(S, total=False):
    x: str


def _several_updates(lib: Lib) -> Any:
    g = lib.StateGraph(Pair)
    g.add_node(
        "multi",
        lambda s: [lib.Command(update={"log": ["m1"]}), lib.Command(update={"log": ["m2"], "x": "X"}, goto="pairs")],
    )
    g.add_node("pairs", lambda s: lib.Command(update=[("log", ["p1"]), ("log", ["p2"])]))
    g.add_edge(lib.START, "multi")
    return list(g.compile().stream({"log": []}, stream_mode="updates"))


def test_several_updates_of_one_node_stream_as_langgraph() -> None:
    theirs, ours = _both(_several_updates)
    assert ours == theirs
    assert ours[1] == {"pairs": [{"log": ["p1"]}, {"log": ["p2"]}]}


def _debug_event(event: dict[str, Any]) -> Any:
    """A debug event without what differs by nature: ids, timestamps, checkpoint ids."""
    payload = dict(event["payload"])
    payload.pop("id", None)
    for key in ("config", "parent_config"):
        if key in payload:
            payload[key] = payload[key] is not None
    if "tasks" in payload:
        payload["tasks"] = [
            {**{k: v for k, v in t.items() if k != "id"}, "interrupts": [i["value"] for i in t["interrupts"]]}
            for t in payload["tasks"]
        ]
    if payload.get("error") is not None:
        payload["error"] = type(payload["error"]).__name__
    payload["interrupts"] = [i["value"] for i in payload.get("interrupts", ())]
    return (event["step"], event["type"], payload)


def _debug_stream(lib: Lib) -> Any:
    def fail(state: Pair) -> dict[str, Any]:
        raise ValueError("boom")

    g = lib.StateGraph(Pair)
    g.add_node("multi", lambda s: [lib.Command(update={"log": ["m1"]}), lib.Command(update={"log": ["m2"], "x": "X"})])
    g.add_node("ask", lambda s: {"log": [lib.interrupt("q?")]})
    g.add_node("fail", fail)
    g.add_edge(lib.START, "multi")
    g.add_edge("multi", "ask")
    g.add_edge("ask", "fail")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("debug")
    runs: list[Any] = []
    for value in ({"log": []}, lib.Command(resume="a")):
        events: list[Any] = []
        try:
            events.extend(app.stream(value, cfg, stream_mode="debug"))
        except ValueError:
            events.append("ValueError")
        runs.append([e if isinstance(e, str) else _debug_event(e) for e in events])
    return runs


def test_the_debug_stream_is_shaped_as_langgraph() -> None:
    theirs, ours = _both(_debug_stream)
    assert ours == theirs
    kinds = [e[1] for e in ours[0]]
    assert "checkpoint" in kinds and "task_result" in kinds


def _stop_reading_early(lib: Lib) -> Any:
    finished: list[str] = []

    async def fast(state: S) -> dict[str, Any]:
        return {"log": ["fast"]}

    async def slow(state: S) -> dict[str, Any]:
        await asyncio.sleep(0.3)
        finished.append("slow")
        return {"log": ["slow"]}

    g = lib.StateGraph(S)
    g.add_node("fast", fast)
    g.add_node("slow", slow)
    g.add_edge(lib.START, "fast")
    g.add_edge(lib.START, "slow")
    app = g.compile()

    async def read_one() -> Any:
        chunks = app.astream({"log": []}, stream_mode="updates")
        first = await chunks.__anext__()  # fast's update comes while slow still runs
        await chunks.aclose()
        await asyncio.sleep(0.5)
        return first

    return [asyncio.run(read_one()), finished]


def test_updates_stream_as_tasks_finish_and_stopping_cancels_the_rest() -> None:
    theirs, ours = _both(_stop_reading_early)
    assert ours == theirs == [{"fast": {"log": ["fast"]}}, []]
