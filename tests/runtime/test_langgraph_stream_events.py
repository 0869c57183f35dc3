"""Differential tests of LangGraph 1.2's newer stream API on agent_runtime: `version="v2"` output
(`{"type", "ns", "data"}` parts, `invoke` -> GraphOutput) and the v3 run streams of
`stream_events(version="v3")` / `astream_events(version="v3")` (projections, subgraph handles,
lifecycle events, user transformers, interleaving). Each program runs on LangGraph and on
agent_runtime; what a user sees must be the same, up to ids and timestamps."""

from __future__ import annotations

import asyncio
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from conftest import LIBS

Lib = types.SimpleNamespace


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    answer: str


@dataclass
class D:
    log: Annotated[list[str], operator.add]
    answer: str = ""


def _both(program: Callable[[Lib], Any]) -> tuple[Any, Any]:
    return program(LIBS["langgraph"]()), program(LIBS["agent_runtime"]())


def _stream_api(lib: Lib) -> types.SimpleNamespace:
    """The library's stream module (`langgraph.stream` or `agent_runtime.stream`) and stream writer."""
    if lib.name == "langgraph":
        import langgraph.stream as stream
        from langgraph.config import get_stream_writer
    else:
        import agent_runtime.stream as stream
        from agent_runtime.config import get_stream_writer
    return types.SimpleNamespace(stream=stream, get_stream_writer=get_stream_writer)


def _ns(ns: Any) -> tuple[str, ...]:
    """A stream namespace without its task ids."""
    return tuple(part.split(":")[0] for part in ns)


def _nested(lib: Lib) -> Any:
    """outer -> inner (a compiled subgraph node) -> its node writes a custom chunk."""

    def leaf(state: S) -> dict[str, Any]:
        _stream_api(lib).get_stream_writer()({"from": "leaf"})
        return {"log": ["leaf"]}

    inner = lib.StateGraph(S)
    inner.add_node("leaf", leaf)
    inner.add_edge(lib.START, "leaf")
    outer = lib.StateGraph(S)
    outer.add_node("first", lambda s: {"log": ["first"]})
    outer.add_node("inner", inner.compile())
    outer.add_edge(lib.START, "first")
    outer.add_edge("first", "inner")
    return outer.compile()


# -- 1. version="v2" --------------------------------------------------------------------------------------
def _v2_parts(lib: Lib) -> Any:
    parts = list(
        _nested(lib).stream({"log": []}, stream_mode=["values", "updates", "custom"], subgraphs=True, version="v2")
    )
    return [(p["type"], _ns(p["ns"]), p["data"], p.get("interrupts")) for p in parts]


def test_v2_parts_have_type_namespace_data_and_interrupts_apart() -> None:
    theirs, ours = _both(_v2_parts)
    assert ours == theirs


def _v2_invoke(lib: Lib) -> Any:
    g = lib.StateGraph(D)
    g.add_node("ask", lambda s: {"answer": lib.interrupt("q?"), "log": ["ask"]})
    g.add_edge(lib.START, "ask")
    app = g.compile(checkpointer=lib.MemorySaver())
    cfg = {"configurable": {"thread_id": "v2"}}
    paused = app.invoke({"log": []}, cfg, version="v2")
    done = app.invoke(lib.Command(resume="yes"), cfg, version="v2")
    updates = app.invoke({"log": []}, {"configurable": {"thread_id": "u"}}, stream_mode="updates", version="v2")
    return (
        type(paused).__name__,
        paused.value,
        [i.value for i in paused.interrupts],
        done.value,
        done.interrupts,
        [(p["type"], sorted(p["data"])) for p in updates],
    )


def test_v2_invoke_returns_graph_output_with_the_schema_instance() -> None:
    theirs, ours = _both(_v2_invoke)
    assert ours == theirs


# -- 2. v3 run streams ------------------------------------------------------------------------------------
def _v3_projections(lib: Lib) -> Any:
    stream = _stream_api(lib).stream
    extra = [stream.UpdatesTransformer, stream.CustomTransformer]
    run = _nested(lib).stream_events({"log": []}, version="v3", transformers=extra)
    seen = []
    # handles come as the subgraphs start; their projections fill as the run goes on (what went out
    # before a projection was subscribed is not kept: root updates of the steps read here are lost)
    for handle in run.subgraphs:
        seen.append((handle.graph_name, _ns(handle.path), list(handle.interleave("values", "custom")), handle.status))
    return seen, list(run.updates), run.output, run.interrupted, sorted(run.extensions)


def test_v3_projections_and_subgraph_handles() -> None:
    theirs, ours = _both(_v3_projections)
    assert ours == theirs


def _v3_lifecycle_and_log(lib: Lib) -> Any:
    run = _nested(lib).stream_events({"log": []}, version="v3")
    events = list(run)  # the main log: lifecycle events replace the raw task events
    payloads = [e["params"]["data"] for e in events if e["method"] == "lifecycle"]
    lifecycle = [(p["event"], _ns(p["namespace"])) for p in payloads]
    return [e["method"] for e in events], [e["seq"] for e in events], lifecycle


def test_v3_main_log_carries_lifecycle_events_in_seq_order() -> None:
    theirs, ours = _both(_v3_lifecycle_and_log)
    assert ours == theirs


def _v3_interrupt_async(lib: Lib) -> Any:
    g = lib.StateGraph(S)
    g.add_node("ask", lambda s: {"answer": lib.interrupt("q?")})
    g.add_edge(lib.START, "ask")
    app = g.compile(checkpointer=lib.MemorySaver())

    async def main() -> Any:
        run = await app.astream_events({"log": []}, {"configurable": {"thread_id": "a"}}, version="v3")
        values = [v async for v in run.values]
        return values, await run.output(), await run.interrupted(), [i.value for i in await run.interrupts()]

    return asyncio.run(main())


def test_v3_async_run_reports_the_interrupt() -> None:
    theirs, ours = _both(_v3_interrupt_async)
    assert ours == theirs


def _v3_user_transformer(lib: Lib) -> Any:
    stream = _stream_api(lib).stream

    class StepCounter(stream.StreamTransformer):
        """A named channel: its pushes go to the main log as `custom:steps` events."""

        def __init__(self, scope: tuple[str, ...] = ()) -> None:
            super().__init__(scope)
            self.steps = stream.StreamChannel("steps")

        def init(self) -> dict[str, Any]:
            return {"steps": self.steps}

        def process(self, event: Any) -> bool:
            if event["method"] == "updates" and not event["params"]["namespace"]:
                self.steps.push(sorted(event["params"]["data"]))
            return True

    def run_stream() -> Any:
        return _nested(lib).stream_events(
            {"log": []}, version="v3", transformers=[stream.UpdatesTransformer, StepCounter]
        )

    interleaved = [(name, item) for name, item in run_stream().interleave("steps", "updates")]
    custom = [e["params"]["data"] for e in run_stream() if e["method"] == "custom:steps"]
    return interleaved, custom


def test_v3_user_transformer_and_interleave() -> None:
    theirs, ours = _both(_v3_user_transformer)
    assert ours == theirs


def test_sync_run_stream_dropped_inside_async_code_closes_cleanly(monkeypatch: Any) -> None:
    """A sync v3 run stream left unfinished and collected while an event loop runs on the thread: its
    graph generator is still closed (on its own loop, from a helper thread), without an error."""
    import gc
    import sys

    unraisable: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: unraisable.append(info.exc_value))
    run = _nested(LIBS["agent_runtime"]()).stream_events({"log": []}, version="v3")
    cursor = iter(run.values)
    assert next(cursor) == {"log": []}

    async def drop() -> None:
        nonlocal run, cursor
        del run, cursor
        gc.collect()

    asyncio.run(drop())
    assert unraisable == []
