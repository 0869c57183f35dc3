"""Differential tests of failure handling and run control: the same program runs on LangGraph and on
agent_runtime (each library's names from its own module paths) and the results must be equal.
Covered: node error handlers (`add_node` / `set_node_defaults(error_handler=)`, `NodeError`, routing
with Command, a resume after the handler crashed), RetryPolicy waits of sync nodes, a node raising
CancelledError itself, `RunControl.request_drain()` (stop, resume, a drained subgraph), Send(timeout=)
and `step_timeout`.

No `from __future__ import annotations`: an error handler's `error: NodeError` parameter is found by
its annotation, which must be the class, not a string naming it."""

import asyncio
import importlib
import operator
import types
from typing import Annotated, Any
from unittest.mock import patch

import pytest
from typing_extensions import TypedDict

MODULES = {
    "langgraph": {
        "graph": "langgraph.graph",
        "runtime": "langgraph.runtime",
        "types": "langgraph.types",
        "errors": "langgraph.errors",
        "memory": "langgraph.checkpoint.memory",
    },
    "agent_runtime": {
        "graph": "agent_runtime",
        "runtime": "agent_runtime.runtime",
        "types": "agent_runtime.types",
        "errors": "agent_runtime.errors",
        "memory": "agent_runtime",
    },
}
NAMES = {
    "graph": ("StateGraph", "START", "END"),
    "runtime": ("RunControl",),
    "types": ("Command", "RetryPolicy", "Send", "TimeoutPolicy"),
    "errors": ("GraphDrained", "NodeCancelledError", "NodeError", "NodeTimeoutError"),
}


def _lib(name: str) -> types.SimpleNamespace:
    modules = {key: importlib.import_module(path) for key, path in MODULES[name].items()}
    values = {n: getattr(modules[key], n) for key, names in NAMES.items() for n in names}
    saver = "InMemorySaver" if name == "langgraph" else "InMemoryCheckpointer"
    return types.SimpleNamespace(name=name, Saver=getattr(modules["memory"], saver), **values)


def both(program: Any) -> None:
    """Run `program(lib)` on each library; the results must be equal."""
    results = {name: program(_lib(name)) for name in MODULES}
    assert results["agent_runtime"] == results["langgraph"]


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _fail(state: Log) -> dict[str, Any]:
    raise RuntimeError("boom")


def test_error_handlers_route_and_default() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        def handler(state: Log, error: lib.NodeError) -> Any:
            return lib.Command(update={"log": [f"handled {error.node}: {error.error}"]}, goto="after")

        def fallback(state: Log, error: lib.NodeError) -> dict[str, Any]:
            return {"log": [f"default {error.node}"]}

        routed = (
            lib.StateGraph(Log)
            .add_node("fails", _fail, error_handler=handler)
            .add_node("after", lambda state: {"log": ["after"]})
            .add_edge(lib.START, "fails")
            .compile()
        )
        defaulted = (
            lib.StateGraph(Log)
            .set_node_defaults(error_handler=fallback)
            .add_node("a", _fail)
            .add_node("b", lambda state: {"log": ["b"]})
            .add_edge(lib.START, "a")
            .add_edge(lib.START, "b")
            .compile()
        )
        # the handler's update goes where its node's would have (barrier order: "a" before "b")
        return routed.invoke({"log": []}), defaulted.invoke({"log": []})

    both(program)


def test_error_handler_runs_again_on_resume_not_the_node() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        calls: list[str] = []
        crash = [True]

        def node(state: Log) -> dict[str, Any]:
            calls.append("node")
            raise RuntimeError("boom")

        def handler(state: Log, error: lib.NodeError) -> dict[str, Any]:
            calls.append("handler")
            if crash[0]:
                raise RuntimeError("handler crash")
            return {"log": [f"recovered {error.node}"]}

        app = (
            lib.StateGraph(Log)
            .add_node("n", node, error_handler=handler)
            .add_edge(lib.START, "n")
            .compile(checkpointer=lib.Saver())
        )
        config = {"configurable": {"thread_id": "t"}}
        with pytest.raises(RuntimeError, match="handler crash"):
            app.invoke({"log": []}, config)
        state = app.get_state(config)
        after_crash = (state.values, state.next, [(t.name, t.error, t.result) for t in state.tasks])
        crash[0] = False
        resumed = list(app.stream(None, config, stream_mode=["updates", "values"]))
        history = [(s.next, [(t.name, t.error, t.result) for t in s.tasks]) for s in app.get_state_history(config)]
        return after_crash, resumed, history, calls

    both(program)


def test_sync_retry_waits_with_time_sleep_and_user_cancel_fails_the_node() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        attempts: list[int] = []

        def flaky(state: Log) -> dict[str, Any]:
            attempts.append(len(attempts))
            if len(attempts) < 3:
                raise ValueError("not yet")
            return {"log": ["ok"]}

        policy = lib.RetryPolicy(initial_interval=0.01, jitter=False, retry_on=ValueError)
        app = lib.StateGraph(Log).add_node("f", flaky, retry_policy=policy).add_edge(lib.START, "f").compile()
        with patch("time.sleep") as sleep:
            result = app.invoke({"log": []})

        async def cancels(state: Log) -> dict[str, Any]:
            raise asyncio.CancelledError("from the node")

        cancelling = lib.StateGraph(Log).add_node("c", cancels).add_edge(lib.START, "c").compile()
        with pytest.raises(lib.NodeCancelledError) as caught:
            asyncio.run(cancelling.ainvoke({"log": []}))
        return result, [call.args for call in sleep.call_args_list], caught.value.node

    both(program)


def test_request_drain_stops_and_resumes() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        control = lib.RunControl()

        def first(state: Log) -> dict[str, Any]:
            control.request_drain("sigterm")
            return {"log": ["first"]}

        def child() -> Any:
            return (
                lib.StateGraph(Log)
                .add_node("c1", first)
                .add_node("c2", lambda state: {"log": ["c2"]})
                .add_edge(lib.START, "c1")
                .add_edge("c1", "c2")
                .compile()
            )

        app = (
            lib.StateGraph(Log)
            .add_node("child", child())
            .add_node("last", lambda state: {"log": ["last"]})
            .add_edge(lib.START, "child")
            .add_edge("child", "last")
            .compile(checkpointer=lib.Saver())
        )
        config = {"configurable": {"thread_id": "t"}}
        with pytest.raises(lib.GraphDrained) as caught:
            app.invoke({"log": []}, config, control=control)
        pre_drained = lib.RunControl()
        pre_drained.request_drain()
        with pytest.raises(lib.GraphDrained):
            app.invoke({"log": []}, {"configurable": {"thread_id": "other"}}, control=pre_drained)
        return caught.value.reason, app.invoke(None, config)

    both(program)


def test_send_timeout_and_step_timeout() -> None:
    async def slow(state: Any) -> dict[str, Any]:
        await asyncio.sleep(0.3)
        return {"log": ["slow"]}

    def program(lib: types.SimpleNamespace) -> Any:
        def fan_out(state: Log) -> list[Any]:
            return [lib.Send("slow", state, timeout=lib.TimeoutPolicy(idle_timeout=0.05))]

        sent = (
            lib.StateGraph(Log).add_node("slow", slow, timeout=5.0).add_conditional_edges(lib.START, fan_out).compile()
        )
        with pytest.raises(lib.NodeTimeoutError) as caught:
            asyncio.run(sent.ainvoke({"log": []}))
        stepped = lib.StateGraph(Log).add_node("slow", slow).add_edge(lib.START, "slow").compile()
        stepped.step_timeout = 0.05
        with pytest.raises(TimeoutError):
            asyncio.run(stepped.ainvoke({"log": []}))
        return caught.value.kind, caught.value.idle_timeout

    both(program)
