"""Differential conformance: each graph is built once per library and run in LangGraph and in
agent_runtime; the nodes run per superstep and the final state must match (plus a few expected
traces from shared/specs/runtime-semantics.md, so both cannot be wrong the same way)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import operator
import time
import types
import uuid
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest
from conftest import LIBS, trace
from pydantic import BaseModel

Lib = types.SimpleNamespace
# the graphs reproduce LangGraph's surprising shapes on purpose
pytestmark = pytest.mark.filterwarnings("ignore::agent_runtime.graph.diagnostics.TopologyWarning")


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    n: int
    x: str
    cve: bool
    cvss: bool


def _node(name: str, calls: dict[str, int] | None = None) -> Callable[[Any], dict[str, Any]]:
    def run(state: Any) -> dict[str, Any]:
        if calls is not None:
            calls[name] = calls.get(name, 0) + 1
        return {"log": [name]}

    return run


def _graph(lib: Lib, names: str, edges: list[tuple[Any, str]], **node_kwargs: Any) -> Any:
    g = lib.StateGraph(Log)
    for name in names.split():  # "" -> an empty builder
        g.add_node(name, _node(name), **node_kwargs.get(name, {}))
    for src, dst in edges:
        g.add_edge(src, dst)
    return g


def _start(lib: Lib, name: str) -> tuple[Any, str]:
    return (lib.START, name)


# -- graph builders: (lib) -> list of (app, input, config) runs ------------------------------------------
def linear(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c", [_start(lib, "a"), ("a", "b"), ("b", "c"), ("c", lib.END)])
    return [(g.compile(), {"log": []}, None)]


def fanout_fanin_reducer(lib: Lib) -> list[Any]:
    g = _graph(
        lib,
        "a b c d collect",
        [_start(lib, "a"), ("a", "b"), ("a", "c"), ("a", "d"), ("b", "collect"), ("c", "collect"), ("d", "collect")],
    )
    return [(g.compile(), {"log": ["in"]}, None)]


def unequal_branches(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c b2 d", [_start(lib, "a"), ("a", "b"), ("a", "c"), ("b", "b2"), ("b2", "d"), ("c", "d")])
    return [(g.compile(), {"log": []}, None)]


def join(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c b2 d", [_start(lib, "a"), ("a", "b"), ("a", "c"), ("b", "b2")])
    g.add_edge(["b2", "c"], "d")
    return [(g.compile(), {"log": []}, None)]


def join_in_loop(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c d", [_start(lib, "a"), ("a", "b"), ("a", "c")])
    g.add_edge(["b", "c"], "d")
    g.add_conditional_edges("d", lambda s: "a" if len(s["log"]) < 9 else lib.END, ["a", lib.END])
    return [(g.compile(), {"log": []}, None)]


def _cve_graph(lib: Lib, defer: bool) -> Any:
    g = lib.StateGraph(Log)
    for name in ("get_cve_data", "get_cvss_data", "enrich_cve", "generate"):
        g.add_node(name, _node(name))
    g.add_node("normalize", _node("normalize"), defer=defer)
    g.add_edge(lib.START, "get_cve_data")
    g.add_edge(lib.START, "get_cvss_data")
    g.add_conditional_edges("get_cve_data", lambda s: "enrich_cve" if s["cve"] else "normalize")
    g.add_conditional_edges("get_cvss_data", lambda s: "normalize" if s["cvss"] else lib.END)
    g.add_edge("enrich_cve", "normalize")
    g.add_edge("normalize", "generate")
    return g.compile()


def cve_agent(lib: Lib) -> list[Any]:
    runs = []
    for defer in (False, True):
        for cve, cvss in ((True, True), (False, True), (True, False)):
            runs.append((_cve_graph(lib, defer), {"log": [], "cve": cve, "cvss": cvss}, None))
    return runs


def conditional_loop(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("inc", lambda s: {"n": s.get("n", 0) + 1, "log": ["inc"]})
    g.add_node("check", _node("check"))
    g.add_edge(lib.START, "inc")
    g.add_edge("inc", "check")
    g.add_conditional_edges("check", lambda s: "inc" if s["n"] < 3 else "done", {"inc": "inc", "done": lib.END})
    return [(g.compile(), {"n": 0, "log": []}, None)]


def send_map_reduce(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("root", _node("root"))
    g.add_node("auditor", _node("auditor"))
    g.add_node("worker", lambda arg: {"log": [f"w{arg['i']}"]})
    g.add_node("reduce", _node("reduce"))
    g.add_edge(lib.START, "root")
    g.add_edge("root", "auditor")
    g.add_conditional_edges("root", lambda s: [lib.Send("worker", {"i": i}) for i in (1, 2, 3)])
    g.add_edge("worker", "reduce")
    return [(g.compile(), {"log": []}, None)]


def command_goto(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("a", lambda s: lib.Command(update={"log": ["a"]}, goto=["c", lib.Send("d", {"log": ["sent"]})]))
    g.add_node("b", _node("b"))
    g.add_node("c", _node("c"))
    g.add_node("d", lambda arg: {"log": arg["log"] + ["d"]})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    return [(g.compile(), {"log": []}, None)]


def last_value_conflict(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("a", lambda s: {"x": "a", "log": ["a"]})
    g.add_node("b", lambda s: {"x": "b"})
    g.add_node("c", lambda s: {"x": "c"})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    return [(g.compile(), {"log": []}, None)]


def recursion_limit(lib: Lib) -> list[Any]:
    forever = lib.StateGraph(Log)
    forever.add_node("inc", lambda s: {"n": s["n"] + 1})
    forever.add_edge(lib.START, "inc")
    forever.add_edge("inc", "inc")
    four = _graph(lib, "a b c d", [_start(lib, "a"), ("a", "b"), ("b", "c"), ("c", "d")])
    return [
        (forever.compile(), {"n": 0}, {"recursion_limit": 6}),
        (four.compile(), {"log": []}, {"recursion_limit": 5}),
        (four.compile(), {"log": []}, {"recursion_limit": 4}),
    ]


def remaining_steps(lib: Lib) -> list[Any]:
    # functional form: the annotation depends on the library under test
    state = TypedDict("state", {"log": Annotated[list[str], operator.add], "remaining": lib.RemainingSteps})  # type: ignore[misc]  # noqa: UP013
    g = lib.StateGraph(state)
    g.add_node("a", lambda s: {"log": [f"a{s['remaining']}"]})
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", lambda s: "a" if s["remaining"] > 2 else lib.END)
    return [(g.compile(), {"log": []}, {"recursion_limit": 7})]


def defer(lib: Lib) -> list[Any]:
    g = _graph(
        lib,
        "a b c b2 d",
        [_start(lib, "a"), ("a", "b"), ("a", "c"), ("b", "b2"), ("b2", "d"), ("c", "d")],
        d={"defer": True},
    )
    sends = lib.StateGraph(Log)
    sends.add_node("root", _node("root"))
    sends.add_node("worker", lambda arg: {"log": ["worker"]})
    sends.add_node("final", _node("final"), defer=True)
    sends.add_edge(lib.START, "root")
    sends.add_edge("root", "final")
    sends.add_conditional_edges("root", lambda s: [lib.Send("worker", {}), lib.Send("worker", {})])
    sends.add_edge("worker", "final")
    return [(g.compile(), {"log": []}, None), (sends.compile(), {"log": []}, None)]


def subgraph(lib: Lib) -> list[Any]:
    inner = _graph(lib, "s1 s2", [_start(lib, "s1"), ("s1", "s2")]).compile()
    outer = lib.StateGraph(Log)
    outer.add_node("pre", _node("pre"))
    outer.add_node("sub", inner)
    outer.add_node("post", _node("post"))
    outer.add_edge(lib.START, "pre")
    outer.add_edge("pre", "sub")
    outer.add_edge("sub", "post")
    return [(outer.compile(), {"log": []}, None)]


def retries(lib: Lib) -> list[Any]:
    attempts = {"n": 0}

    def flaky(state: Any) -> dict[str, Any]:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise ConnectionError("transient")
        return {"log": [f"flaky{attempts['n']}"]}

    g = lib.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_node("flaky", flaky, retry_policy=lib.RetryPolicy(initial_interval=0.001, jitter=False))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "flaky")
    never = lib.StateGraph(Log)
    never.add_node("bad", lambda s: 1 / 0, retry_policy=lib.RetryPolicy(initial_interval=0.001, jitter=False))
    never.add_edge(lib.START, "bad")
    return [(g.compile(), {"log": []}, None), (never.compile(), {"log": []}, None)]


@dataclasses.dataclass
class DataState:
    log: Annotated[list[str], operator.add]
    n: int = 0


class PydState(BaseModel):
    log: Annotated[list[str], operator.add] = []
    n: int = 0


def schema_kinds(lib: Lib) -> list[Any]:
    runs = []
    for schema in (DataState, PydState):
        g = lib.StateGraph(schema)
        g.add_node("a", lambda s: {"log": [f"a{s.n}"], "n": s.n + 1})
        g.add_node("b", lambda s: {"log": [f"b{s.n}"]})
        g.add_edge(lib.START, "a")
        g.add_conditional_edges("a", lambda s: "b" if s.n > 0 else lib.END)
        runs.append((g.compile(), {"log": [], "n": 0}, None))
    return runs


def entry_sends_and_list_branches(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("worker", lambda arg: {"log": [f"w{arg['i']}"]})
    g.add_node("p", _node("p"))
    g.add_node("q", _node("q"))
    g.add_node("r", _node("r"))
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("worker", {"i": i}) for i in range(3)])
    g.add_conditional_edges("worker", lambda s: ["p", "q", lib.END], ["p", "q", lib.END])
    g.add_edge("p", "r")
    g.add_edge("q", "r")
    return [(g.compile(), {"log": []}, None)]


def deferred_join(lib: Lib) -> list[Any]:
    g = _graph(
        lib, "a b c b2 d e", [_start(lib, "a"), ("a", "b"), ("a", "c"), ("b", "b2"), ("c", "e")], d={"defer": True}
    )
    g.add_edge(["b2", "c"], "d")
    return [(g.compile(), {"log": []}, None)]


def goto_mixed(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("a", lambda s: lib.Command(update={"log": ["a"]}, goto=[lib.END, "b", "b"]))
    g.add_node("b", lambda s: [lib.Command(update={"log": ["b1"]}), lib.Command(update={"log": ["b2"]}, goto="c")])
    g.add_node("c", _node("c"))
    g.add_edge(lib.START, "a")
    return [(g.compile(), {"log": []}, None)]


def odd_returns(lib: Lib) -> list[Any]:
    unknown = _graph(lib, "", [])
    unknown.add_node("a", lambda s: {"unknown": 1, "log": ["a"]})
    unknown.add_edge(lib.START, "a")
    bad = _graph(lib, "", [])
    bad.add_node("a", lambda s: "oops")
    bad.add_edge(lib.START, "a")
    missing = _graph(lib, "", [])
    missing.add_node("a", lambda s: {"log": [s["x"]]})
    missing.add_edge(lib.START, "a")
    return [
        (unknown.compile(), {"log": []}, None),
        (bad.compile(), {"log": []}, None),
        (missing.compile(), {"log": []}, None),
    ]


def sends_hit_recursion_limit(lib: Lib) -> list[Any]:
    g = lib.StateGraph(Log)
    g.add_node("w", lambda arg: {"log": [str(arg)]})
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("w", 0)])
    g.add_conditional_edges("w", lambda s: [lib.Send("w", len(s["log"]))])
    return [(g.compile(), {"log": []}, {"recursion_limit": 4})]


CASES = [
    linear,
    fanout_fanin_reducer,
    unequal_branches,
    join,
    join_in_loop,
    cve_agent,
    conditional_loop,
    send_map_reduce,
    command_goto,
    last_value_conflict,
    recursion_limit,
    remaining_steps,
    defer,
    subgraph,
    retries,
    schema_kinds,
    entry_sends_and_list_branches,
    deferred_join,
    goto_mixed,
    odd_returns,
    sends_hit_recursion_limit,
]


def _run_all(name: str, build: Callable[[Lib], list[Any]]) -> list[Any]:
    return [trace(app, inp, cfg) for app, inp, cfg in build(LIBS[name]())]


@pytest.mark.parametrize("build", CASES, ids=lambda f: f.__name__)
def test_same_supersteps_and_state_as_langgraph(build: Callable[[Lib], list[Any]]) -> None:
    assert _run_all("agent_runtime", build) == _run_all("langgraph", build)


EXPECTED = {
    # langgraph #5979: d runs twice (spec §4.1)
    unequal_branches: [([(1, ("a",)), (2, ("b", "c")), (3, ("b2", "d")), (4, ("d",))], None)],
    join: [([(1, ("a",)), (2, ("b", "c")), (3, ("b2",)), (4, ("d",))], None)],
    # reducer order: PULL tasks by name, then Sends by index (spec §6)
    send_map_reduce: [(None, {"log": ["root", "auditor", "w1", "w2", "w3", "reduce"]})],
    last_value_conflict: [(None, "InvalidUpdateError")],
    recursion_limit: [
        (None, "GraphRecursionError"),
        (None, {"log": ["a", "b", "c", "d"]}),
        (None, "GraphRecursionError"),
    ],
    subgraph: [(None, {"log": ["pre", "pre", "s1", "s2", "post"]})],
    remaining_steps: [(None, {"log": ["a6", "a5", "a4", "a3", "a2"]})],
}


@pytest.mark.parametrize("build", list(EXPECTED), ids=lambda f: f.__name__)
def test_expected_traces_from_the_spec(build: Callable[[Lib], list[Any]]) -> None:
    for (steps, final), (want_steps, want_final) in zip(_run_all("agent_runtime", build), EXPECTED[build], strict=True):
        if want_steps is not None:
            assert steps == want_steps
        if want_final is not None:
            assert final == want_final


# -- stateful scenarios (checkpointer, threads, interrupts) --------------------------------------------
def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


def multi_turn(lib: Lib) -> list[Any]:
    g = _graph(lib, "a", [_start(lib, "a")])
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg()
    return [trace(app, {"log": ["t1"]}, cfg), trace(app, {"log": ["t2"]}, cfg), app.get_state(cfg).values]


def interrupt_resume(lib: Lib) -> list[Any]:
    calls: dict[str, int] = {}

    def ask(state: Any) -> dict[str, Any]:
        calls["ask"] = calls.get("ask", 0) + 1
        answer = lib.interrupt("name?")
        return {"log": [f"ask:{answer}"]}

    g = lib.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_node("ask", ask)
    g.add_node("sibling", _node("sibling", calls))
    g.add_node("after", _node("after"))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "ask")
    g.add_edge("a", "sibling")
    g.add_edge("ask", "after")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg()
    first = trace(app, {"log": []}, cfg)
    snapshot = app.get_state(cfg)
    pending = (snapshot.next, [i.value for i in snapshot.interrupts], snapshot.values)
    second = trace(app, lib.Command(resume="bob"), cfg)
    return [first, pending, second, app.get_state(cfg).values, dict(calls)]


def error_then_resume(lib: Lib, sibling_s: float = 0.0) -> list[Any]:
    """A node fails beside a sibling; the run is resumed once it would pass. `sibling_s`: the sibling's
    time on its thread, so it is still running when the step fails."""
    fail = {"on": True}

    def fragile(state: Any) -> dict[str, Any]:
        if fail["on"]:
            raise ValueError("boom")
        return {"log": ["fragile"]}

    def sibling(state: Any) -> dict[str, Any]:
        time.sleep(sibling_s)
        return _node("sibling", calls)(state)

    calls: dict[str, int] = {}
    g = lib.StateGraph(Log)
    g.add_node("a", _node("a"))
    g.add_node("fragile", fragile)
    g.add_node("sibling", sibling)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "fragile")
    g.add_edge("a", "sibling")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg()
    first = trace(app, {"log": []}, cfg)
    snapshot = app.get_state(cfg)
    fail["on"] = False
    second = trace(app, None, cfg)
    return [first, snapshot.next, snapshot.values, second, dict(calls)]


def error_beside_a_running_sibling(lib: Lib) -> list[Any]:
    """The sibling still runs on its thread when its step fails: it finishes and its writes are kept, so
    the resumed run does not call it again."""
    return error_then_resume(lib, sibling_s=0.3)


def breakpoints(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c", [_start(lib, "a"), ("a", "b"), ("b", "c")])
    app, cfg = g.compile(checkpointer=lib.MemorySaver(), interrupt_before=["b"], interrupt_after=["b"]), _cfg()
    runs = [trace(app, {"log": []}, cfg), app.get_state(cfg).next]
    runs += [trace(app, None, cfg), app.get_state(cfg).next, trace(app, None, cfg), app.get_state(cfg).next]
    return runs


def update_state(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b", [_start(lib, "a"), ("a", "b")])
    app, cfg = g.compile(checkpointer=lib.MemorySaver(), interrupt_before=["b"]), _cfg()
    first = trace(app, {"log": []}, cfg)
    app.update_state(cfg, {"log": ["edited"]})  # as the last node that ran: a
    snapshot = app.get_state(cfg)
    second = trace(app, None, cfg)
    history = [s.metadata["step"] for s in app.get_state_history(cfg)]
    return [first, snapshot.values, snapshot.next, second, history]


def command_input(lib: Lib) -> list[Any]:
    g = _graph(lib, "a b c", [_start(lib, "a")])
    g.add_conditional_edges("a", lambda s: "b", ["b", "c"])
    app, cfg = g.compile(checkpointer=lib.MemorySaver(), interrupt_before=["b"]), _cfg()
    first = trace(app, {"log": []}, cfg)
    second = trace(app, lib.Command(update={"log": ["human"]}, goto="c"), cfg)
    return [first, second, app.get_state(cfg).values]


def subgraph_interrupt(lib: Lib) -> list[Any]:
    calls: dict[str, int] = {}
    inner = lib.StateGraph(Log)
    inner.add_node("s1", _node("s1", calls))
    inner.add_node("ask", lambda s: {"log": [f"ask:{lib.interrupt('inner?')}"]})
    inner.add_node("s2", _node("s2", calls))
    inner.add_edge(lib.START, "s1")
    inner.add_edge("s1", "ask")
    inner.add_edge("ask", "s2")
    outer = _graph(lib, "pre post", [_start(lib, "pre"), ("sub", "post")])
    outer.add_node("sub", inner.compile())
    outer.add_edge("pre", "sub")
    app, cfg = outer.compile(checkpointer=lib.MemorySaver()), _cfg()
    first = app.invoke({"log": []}, cfg)
    pending = (app.get_state(cfg).next, [i.value for i in first["__interrupt__"]])
    second = app.invoke(lib.Command(resume="yes"), cfg)
    return [first["log"], pending, second, dict(calls)]


STATEFUL = [
    multi_turn,
    interrupt_resume,
    error_then_resume,
    error_beside_a_running_sibling,
    breakpoints,
    update_state,
    command_input,
    subgraph_interrupt,
]


@pytest.mark.parametrize("scenario", STATEFUL, ids=lambda f: f.__name__)
def test_stateful_scenarios_match_langgraph(scenario: Callable[[Lib], list[Any]]) -> None:
    ours = scenario(LIBS["agent_runtime"]())
    theirs = scenario(LIBS["langgraph"]())
    assert ours == theirs


def test_interrupt_resume_reapplies_sibling_writes_without_rerun() -> None:
    first, pending, second, final, calls = interrupt_resume(LIBS["agent_runtime"]())
    assert first[0] == [(1, ("a",)), (2, ("ask", "sibling"))]
    assert pending[0] == ("ask",)
    assert second[0] == [(2, ("ask", "sibling")), (3, ("after",))]
    assert final["log"] == ["a", "ask:bob", "sibling", "after"]
    assert calls == {"ask": 2, "sibling": 1}


def test_multi_turn_step_numbers() -> None:
    first, second, final = multi_turn(LIBS["agent_runtime"]())
    assert first[0] == [(1, ("a",))] and second[0] == [(4, ("a",))]
    assert final["log"] == ["t1", "a", "t2", "a"]


# -- async nodes, update streams, multi-interrupt nodes ---------------------------------------------------
def _async_graph(lib: Lib) -> Any:
    async def anode(name: str, state: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"log": [name]}

    g = lib.StateGraph(Log)
    for name in ("a", "b", "c"):
        g.add_node(name, functools.partial(anode, name))
    g.add_node("worker", lambda arg: {"log": [f"w{arg['i']}"]})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("a", lambda s: [lib.Send("worker", {"i": i}) for i in (1, 2)])
    g.add_edge("worker", "c")
    g.add_edge("b", "c")
    return g.compile()


async def _atrace(app: Any) -> Any:
    steps: dict[int, list[str]] = {}
    final = None
    async for mode, event in app.astream({"log": []}, stream_mode=["debug", "values"]):
        if mode == "values":
            final = event
        elif event["type"] == "task":
            steps.setdefault(event["step"], []).append(event["payload"]["name"])
    return sorted((k, tuple(sorted(v))) for k, v in steps.items()), final


def test_async_nodes_match_langgraph() -> None:
    ours = asyncio.run(_atrace(_async_graph(LIBS["agent_runtime"]())))
    theirs = asyncio.run(_atrace(_async_graph(LIBS["langgraph"]())))
    assert ours == theirs
    assert ours[1] == {"log": ["a", "b", "w1", "w2", "c"]}


@pytest.mark.parametrize("build", [unequal_branches, send_map_reduce, command_goto, subgraph], ids=lambda f: f.__name__)
def test_updates_stream_matches_langgraph(build: Callable[[Lib], list[Any]]) -> None:
    def updates(name: str) -> list[str]:
        ((app, inp, cfg),) = build(LIBS[name]())
        return sorted(repr(chunk) for chunk in app.stream(inp, cfg, stream_mode="updates"))

    assert updates("agent_runtime") == updates("langgraph")


def two_questions(lib: Lib) -> list[Any]:
    def ask(state: Any) -> dict[str, Any]:
        first = lib.interrupt("first?")
        second = lib.interrupt("second?")
        return {"log": [f"{first}+{second}"]}

    g = lib.StateGraph(Log)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg()
    first = app.invoke({"log": []}, cfg)
    second = app.invoke(lib.Command(resume="1"), cfg)
    third = app.invoke(lib.Command(resume="2", update={"log": ["edit"]}), cfg)
    return [[i.value for i in first["__interrupt__"]], [i.value for i in second["__interrupt__"]], third]


def test_sequential_interrupts_in_one_node_match_langgraph() -> None:
    ours = two_questions(LIBS["agent_runtime"]())
    assert ours == two_questions(LIBS["langgraph"]())
    assert ours[2] == {"log": ["edit", "1+2"]}
