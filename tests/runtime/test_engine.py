"""Engine behaviour beyond LangGraph parity: concurrency, placement of sync nodes, channel rules."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest

import agent_runtime as ar
from agent_runtime.channels import LastValueAfterFinish, NamedBarrierValue, Topic


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def _parallel(a: Any, b: Any) -> ar.CompiledGraph:
    g = ar.StateGraph(State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(ar.START, "a")
    g.add_edge(ar.START, "b")
    return g.compile()


def test_sync_nodes_of_a_superstep_run_concurrently_in_threads() -> None:
    threads: set[str] = set()
    rendezvous = threading.Barrier(2, timeout=10)  # run one after the other, the nodes would break it

    def slow(name: str) -> Any:
        def node(state: State) -> dict[str, Any]:
            threads.add(threading.current_thread().name)
            rendezvous.wait()
            return {"log": [name]}

        return node

    app = _parallel(slow("a"), slow("b"))
    assert app.invoke({"log": []})["log"] == ["a", "b"]
    assert len(threads) == 2 and all(name.startswith("node") for name in threads)
    assert not app.spec.nodes["a"].runs_inline()  # slow nodes stay in the pool


def test_async_nodes_of_a_superstep_run_concurrently() -> None:
    rendezvous: list[asyncio.Barrier] = []  # made inside the run's event loop

    def slow(name: str) -> Any:
        async def node(state: State) -> dict[str, Any]:
            await asyncio.wait_for(rendezvous[0].wait(), timeout=10)  # awaited one by one: a timeout
            return {"log": [name]}

        return node

    async def run() -> Any:
        rendezvous.append(asyncio.Barrier(2))
        return await app.ainvoke({"log": []})

    app = _parallel(slow("a"), slow("b"))
    assert asyncio.run(run())["log"] == ["a", "b"]


def test_fast_sync_nodes_move_inline_after_three_runs() -> None:
    app = _parallel(lambda s: {"log": ["a"]}, lambda s: {"log": ["b"]})
    placement = app.spec.nodes["a"].placement
    for _ in range(3):
        assert not app.spec.nodes["a"].runs_inline()
        app.invoke({"log": []})
    assert placement.fast_runs == 3 and app.spec.nodes["a"].runs_inline()
    placement.observe(0.01)  # one slow run: back to the pool for good
    assert not app.spec.nodes["a"].runs_inline()


def test_failed_step_applies_nothing() -> None:
    def boom(state: State) -> dict[str, Any]:
        raise KeyError("boom")

    app = _parallel(lambda s: {"log": ["a"]}, boom)
    with pytest.raises(KeyError):
        app.invoke({"log": []})
    report = app.last_run_report
    assert report is not None and report.steps == [] and report.stop_reason is ar.StopReason.ERROR


def test_channel_rules() -> None:
    barrier = NamedBarrierValue(str, {"a", "b"}, key="j")
    assert barrier.update(["a"]) and not barrier.is_available()
    assert not barrier.update(["a"])
    assert barrier.update(["b"]) and barrier.is_available()
    snapshot = barrier.checkpoint()
    assert barrier.consume() and not barrier.is_available()
    assert snapshot == frozenset({"a", "b"})  # the snapshot does not follow the live set
    with pytest.raises(ar.InvalidUpdateError):
        barrier.update(["c"])

    deferred = LastValueAfterFinish(key="d")
    assert deferred.update([None]) and not deferred.is_available()
    assert deferred.finish() and deferred.is_available()
    assert deferred.consume() and not deferred.is_available()

    topic = Topic(int, key="t")
    topic.update([1, [2, 3]])
    assert topic.get() == [1, 2, 3]
    assert topic.update([]) and not topic.is_available()


def test_overwrite_bypasses_the_reducer() -> None:
    g = ar.StateGraph(State)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("reset", lambda s: {"log": ar.Overwrite(["fresh"])})
    g.add_edge(ar.START, "a")
    g.add_edge("a", "reset")
    assert g.compile().invoke({"log": ["x"]})["log"] == ["fresh"]


def test_node_receives_config_with_thread_and_step() -> None:
    seen: list[Any] = []

    def node(state: State, config: dict[str, Any]) -> dict[str, Any]:
        seen.append((config["configurable"]["thread_id"], config["metadata"]["langgraph_step"]))
        return {}

    g = ar.StateGraph(State)
    g.add_node("n", node)
    g.add_edge(ar.START, "n")
    g.compile().invoke({"log": []}, {"configurable": {"thread_id": "t-1"}})
    assert seen == [("t-1", 1)]
