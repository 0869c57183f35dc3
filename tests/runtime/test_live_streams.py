"""What a stream shows while the run goes on, differentially against LangGraph: custom writes and
functional-API task updates as they happen (not at the end of the step), LangChain's event stream
and run log of a graph with a compiled subgraph as a node, the event order of a workflow's task
calls, and a drained graph invoked inside a node. Each program runs on both libraries (same module
paths, only the package name differs); what a user sees must be the same, up to ids and timestamps."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict

LIBS = ("langgraph", "agent_runtime")
PAUSE = 0.3


def _m(lib: str, module: str) -> Any:
    return importlib.import_module(f"{lib}.{module}")


def _both(program: Callable[[str], Any]) -> tuple[Any, Any]:
    return program("langgraph"), program("agent_runtime")


class X(TypedDict):
    x: int


def _with_subgraph(lib: str) -> Any:
    graph = _m(lib, "graph")
    inner = graph.StateGraph(X)
    inner.add_node("inner", lambda s: {"x": s["x"] + 1})
    inner.add_edge(graph.START, "inner")
    outer = graph.StateGraph(X)
    outer.add_node("sub", inner.compile())
    outer.add_node("after", lambda s: {"x": s["x"] * 2})
    outer.add_edge(graph.START, "sub")
    outer.add_edge("sub", "after")
    return outer.compile()


def _arrivals(chunks: Any) -> list[tuple[Any, float]]:
    start = time.perf_counter()
    return [(chunk, time.perf_counter() - start) for chunk in chunks]


@pytest.mark.parametrize("lib", LIBS)
def test_a_custom_write_goes_out_when_written(lib: str) -> None:
    graph, config = _m(lib, "graph"), _m(lib, "config")

    def node(state: X) -> dict[str, int]:
        write = config.get_stream_writer()
        write("before")
        time.sleep(PAUSE)
        write("after")
        return {"x": 1}

    builder = graph.StateGraph(X)
    builder.add_node("node", node)
    builder.add_edge(graph.START, "node")
    app = builder.compile()
    (before, at_first), (after, at_second) = _arrivals(app.stream({"x": 0}, stream_mode="custom"))
    assert (before, after) == ("before", "after")
    assert at_first < PAUSE / 2 <= PAUSE * 0.8 < at_second


@pytest.mark.parametrize("lib", LIBS)
def test_a_custom_write_of_an_async_node_goes_out_when_written(lib: str) -> None:
    graph, config = _m(lib, "graph"), _m(lib, "config")

    async def node(state: X) -> dict[str, int]:
        write = config.get_stream_writer()
        write("before")
        await asyncio.sleep(PAUSE)
        write("after")
        return {"x": 1}

    builder = graph.StateGraph(X)
    builder.add_node("node", node)
    builder.add_edge(graph.START, "node")
    app = builder.compile()

    async def read() -> list[tuple[Any, float]]:
        start = time.perf_counter()
        return [(c, time.perf_counter() - start) async for c in app.astream({"x": 0}, stream_mode="custom")]

    (_, at_first), (_, at_second) = asyncio.run(read())
    assert at_first < PAUSE / 2 <= PAUSE * 0.8 < at_second


@pytest.mark.parametrize("lib", LIBS)
def test_a_task_calls_update_goes_out_when_the_call_returns(lib: str) -> None:
    func = _m(lib, "func")

    @func.task()
    def slow() -> int:
        time.sleep(PAUSE)
        return 1

    @func.entrypoint()
    def workflow(_: Any) -> list[int]:
        return [slow().result(), slow().result()]

    arrivals = [(c, t) for c, t in _arrivals(workflow.stream({})) if "slow" in c]
    assert [c for c, _ in arrivals] == [{"slow": 1}, {"slow": 1}]
    assert arrivals[1][1] - arrivals[0][1] > PAUSE * 0.8


def _events(lib: str) -> list[tuple[Any, ...]]:
    """astream_events of a graph with a subgraph node: run ids numbered in order of appearance."""
    app = _with_subgraph(lib)
    ids: dict[str, int] = {}

    async def read() -> list[tuple[Any, ...]]:
        out = []
        async for e in app.astream_events({"x": 1}, version="v2"):
            number = ids.setdefault(e["run_id"], len(ids))
            langgraph_keys = sorted(
                (k, v) for k, v in e["metadata"].items() if k in ("langgraph_step", "langgraph_node")
            )
            parents = [ids.get(p, p) for p in e["parent_ids"]]
            out.append((e["event"], e["name"], e["tags"], number, parents, langgraph_keys, e["data"]))
        return out

    return asyncio.run(read())


def test_astream_events_of_a_subgraph_node_are_langgraphs() -> None:
    theirs, ours = _both(_events)
    assert ours == theirs
    assert ("on_chain_start", "LangGraph", ["seq:step:1"]) in [e[:3] for e in ours]  # the subgraph's own run


def _children_tags(lib: str) -> list[tuple[str, str, list[str]]]:
    graph = _m(lib, "graph")
    inner = RunnableLambda(lambda x: x + 1, name="inner_lambda")
    builder = graph.StateGraph(X)
    builder.add_node("n", lambda s: {"x": inner.invoke(s["x"])})
    builder.add_edge(graph.START, "n")
    app = builder.compile()

    async def read() -> list[tuple[str, str, list[str]]]:
        return [(e["event"], e["name"], e["tags"]) async for e in app.astream_events({"x": 1}, version="v2")]

    return asyncio.run(read())


def test_what_a_node_calls_is_the_first_step_of_its_run() -> None:
    theirs, ours = _both(_children_tags)
    assert ours == theirs
    assert ("on_chain_start", "inner_lambda", ["seq:step:1"]) in ours


def _log_paths(lib: str) -> tuple[set[str], list[Any]]:
    app = _with_subgraph(lib)

    async def read() -> list[Any]:
        return [patch async for patch in app.astream_log({"x": 1})]

    with pytest.warns(Warning):  # langchain-core deprecates astream_log (for both)
        patches = asyncio.run(read())
    paths = {op["path"] for patch in patches for op in patch.ops}
    finals = [op["value"] for patch in patches for op in patch.ops if op["path"].endswith("/final_output")]
    return {p for p in paths if not p.startswith("/logs/") or p.count("/") == 3}, finals


def test_astream_log_is_langchains_run_log() -> None:
    theirs, ours = _both(_log_paths)
    assert ours == theirs
    assert "/logs/sub/final_output" in ours[0]


def _workflow_events(lib: str) -> list[tuple[str, str, Any]]:
    func = _m(lib, "func")

    @func.task()
    async def double(number: int) -> int:
        await asyncio.sleep(0.01)
        return number * 2

    @func.task()
    async def fails(number: int) -> int:
        await asyncio.sleep(0.01)
        raise ValueError("no")

    @func.entrypoint()
    async def workflow(number: int) -> str:
        await double(number)
        with contextlib.suppress(ValueError):
            await fails(number=number)
        await double(number)
        return "done"

    async def read() -> list[tuple[str, str, Any]]:
        return [(e["event"], e["name"], e["data"].get("input")) async for e in workflow.astream_events(1)]

    return asyncio.run(read())


def test_a_workflows_task_calls_are_reported_in_langgraphs_order() -> None:
    """The graph's update of a call comes before the caller's next call starts, and after its own
    node's output; a call's input is its arguments by name, the workflow's its input."""
    theirs, ours = _both(_workflow_events)
    assert ours == theirs
    assert ("on_chain_start", "fails", {"number": 1}) in ours


def _debug_of_a_paused_workflow(lib: str) -> list[tuple[Any, ...]]:
    func, types, memory = _m(lib, "func"), _m(lib, "types"), importlib.import_module("langgraph.checkpoint.memory")
    saver = memory.InMemorySaver() if lib == "langgraph" else _m(lib, "checkpoint.memory").InMemorySaver()

    @func.task
    def falsy() -> bool:
        return False

    @func.entrypoint(checkpointer=saver)
    def workflow(_: Any) -> None:
        falsy().result()
        types.interrupt("why")

    cfg = {"configurable": {"thread_id": "1"}}
    out = []
    for value in ({"a": 5}, types.Command(resume="because")):
        for c in workflow.stream(value, cfg, stream_mode="debug", durability="exit"):
            p = c["payload"]
            shown = (
                (p.get("metadata"), p.get("next")) if c["type"] == "checkpoint" else (p.get("input"), p.get("result"))
            )
            out.append((c["step"], c["type"], p.get("name"), shown))
    return out


def test_the_debug_stream_of_a_workflow_is_langgraphs() -> None:
    theirs, ours = _both(_debug_of_a_paused_workflow)
    assert ours == theirs
    assert (0, "task_result", "falsy", (None, {"__return__": False})) in ours


def _drained_inside_a_node(lib: str) -> tuple[str, list[str]]:
    graph, runtime, errors = _m(lib, "graph"), _m(lib, "runtime"), _m(lib, "errors")
    control = runtime.RunControl()

    def request_drain(state: X) -> dict[str, Any]:
        control.request_drain()
        return {}

    inner = graph.StateGraph(X)
    inner.add_node("request_drain", request_drain)
    inner.add_node("after", lambda s: {})
    inner.add_edge(graph.START, "request_drain")
    inner.add_edge("request_drain", "after")
    drained_graph = inner.compile()

    def runs_it(state: X) -> dict[str, Any]:
        drained_graph.invoke({"x": 0}, control=control)  # its own control, not the streamed run's
        return {"x": 1}

    outer = graph.StateGraph(X)
    outer.add_node("first", lambda s: {"x": 0})
    outer.add_node("runs_it", runs_it)
    outer.add_edge(graph.START, "first")
    outer.add_edge("first", "runs_it")
    app = outer.compile()
    nodes: list[str] = []
    try:
        for _, _mode, chunk in app.stream({"x": 0}, stream_mode=["updates"], subgraphs=True):
            nodes.extend(chunk)
    except errors.GraphDrained as exc:
        return type(exc).__name__, nodes
    return "not drained", nodes


def test_a_graph_invoked_with_its_own_control_in_a_streamed_node_drains() -> None:
    theirs, ours = _both(_drained_inside_a_node)
    assert ours == theirs == ("GraphDrained", ["first", "request_drain"])
