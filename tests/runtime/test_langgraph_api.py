"""Differential tests of LangGraph API agent_runtime added: the same program runs on LangGraph and on
agent_runtime (LangGraph's names, each from its own module path) and the results must be equal.
Covered: `StateGraph[...]` subscripting, `Runtime` / `get_runtime` / `context=`, `TimeoutPolicy` and
node / task timeouts, `set_node_defaults`, `with_config`, `nodes`, `bulk_update_state` (incl. as_node
"__input__" / "__start__"), `interrupt(response_schema=)`, the JSON
schemas, and `stream_mode="custom"` with `get_stream_writer()` / a `writer` parameter."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import operator
import types
from typing import Annotated, Any

import pydantic
import pytest
from typing_extensions import TypedDict

# LangGraph's module paths and where agent_runtime has each name
MODULES = {
    "langgraph": {
        "graph": "langgraph.graph",
        "runtime": "langgraph.runtime",
        "config": "langgraph.config",
        "types": "langgraph.types",
        "errors": "langgraph.errors",
        "func": "langgraph.func",
        "memory": "langgraph.checkpoint.memory",
        "interrupt": "langgraph.types",
    },
    "agent_runtime": {
        "graph": "agent_runtime",
        "runtime": "agent_runtime.runtime",
        "config": "agent_runtime.config",
        "types": "agent_runtime.types",
        "errors": "agent_runtime.errors",
        "func": "agent_runtime.func",
        "memory": "agent_runtime",
        "interrupt": "agent_runtime",
    },
}
NAMES = {
    "graph": ("StateGraph", "START", "END"),
    "runtime": ("Runtime", "get_runtime"),
    "config": ("get_stream_writer",),
    "types": ("TimeoutPolicy", "StateUpdate", "RetryPolicy"),
    "errors": ("NodeTimeoutError", "InvalidUpdateError"),
    "func": ("task", "entrypoint"),
    "interrupt": ("interrupt", "Interrupt", "Command"),
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


@dataclasses.dataclass
class Context:
    user: str
    retries: int = 2


def _single(lib: types.SimpleNamespace, fn: Any, **node_kwargs: Any) -> Any:
    builder = lib.StateGraph(Log, context_schema=Context)
    builder.add_node("n", fn, **node_kwargs)
    builder.add_edge(lib.START, "n")
    builder.add_edge("n", lib.END)
    return builder


def test_state_graph_subscripting() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        builder: Any = lib.StateGraph[Log](Log)
        typed = lib.StateGraph[Log, Context, Log, Log]
        builder.add_node("n", lambda state: {"log": ["n"]})
        builder.add_edge(lib.START, "n")
        return builder.compile().invoke({"log": []}), typed.__args__

    both(program)


def test_runtime_injection_and_context_coercion() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        def node(state: Log, runtime: Any) -> dict[str, Any]:
            looked_up = lib.get_runtime(Context)
            assert looked_up.context == runtime.context
            return {"log": [f"{runtime.context.user}:{runtime.context.retries}"]}

        app = _single(lib, node).compile()
        with_dict = app.invoke({"log": []}, context={"user": "ann"})
        with_object = app.invoke({"log": []}, context=Context("bob", 5))
        runtime = lib.Runtime(context=Context("x")).override(context=Context("y"))
        return with_dict, with_object, runtime.context

    both(program)


def test_node_timeout_policy() -> None:
    async def slow(state: Log) -> dict[str, Any]:
        await asyncio.sleep(1)
        return {"log": ["slow"]}

    def program(lib: types.SimpleNamespace) -> Any:
        outcomes: list[Any] = []
        for timeout in (lib.TimeoutPolicy(run_timeout=0.05), lib.TimeoutPolicy(idle_timeout=0.05)):
            with pytest.raises(lib.NodeTimeoutError) as caught:
                asyncio.run(_single(lib, slow, timeout=timeout).compile().ainvoke({"log": []}))
            outcomes.append((caught.value.node, caught.value.kind, caught.value.timeout))
        defaults = _single(lib, slow).set_node_defaults(timeout=0.05).compile()
        with pytest.raises(lib.NodeTimeoutError):
            asyncio.run(defaults.ainvoke({"log": []}))
        with pytest.raises(ValueError, match="greater than 0"):
            lib.TimeoutPolicy.coerce(0)
        with pytest.raises(ValueError, match="only supported for async nodes"):
            _single(lib, lambda state: state, timeout=1.0).compile()
        return outcomes

    both(program)


def test_timeout_with_retry_and_heartbeat() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        attempts: list[int] = []

        async def flaky(state: Log, runtime: Any) -> dict[str, Any]:
            attempts.append(runtime.execution_info.node_attempt)
            for _ in range(4):  # heartbeats keep the attempt alive past its idle timeout
                await asyncio.sleep(0.03)
                runtime.heartbeat()
            if len(attempts) < 2:
                await asyncio.sleep(1)
            return {"log": ["ok"]}

        retry = lib.RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=lib.NodeTimeoutError)
        policy = lib.TimeoutPolicy(idle_timeout=0.08, refresh_on="heartbeat")
        app = _single(lib, flaky, timeout=policy, retry_policy=retry).compile()
        return asyncio.run(app.ainvoke({"log": []})), attempts

    both(program)


def test_task_timeout() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        @lib.task(timeout=lib.TimeoutPolicy(run_timeout=0.05))
        async def slow(x: int) -> int:
            await asyncio.sleep(1)
            return x

        @lib.entrypoint()
        async def workflow(x: int) -> int:
            return await slow(x)  # type: ignore[no-any-return]

        with pytest.raises(lib.NodeTimeoutError) as caught:
            asyncio.run(workflow.ainvoke(1))
        with pytest.raises(ValueError, match="only supported for async nodes"):
            lib.task(timeout=1.0)(lambda x: x)
        return caught.value.node, caught.value.kind

    both(program)


def test_with_config_nodes_and_schemas() -> None:
    @dataclasses.dataclass
    class Form:
        name: str
        note: str | None
        size: int = 1

    def program(lib: types.SimpleNamespace) -> Any:
        seen: list[Any] = []

        def node(state: Log, config) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            seen.append((config["configurable"]["a"], config["configurable"]["b"], config["metadata"]["m"]))
            return {"log": ["n"]}

        app = _single(lib, node).compile()
        bound = app.with_config({"configurable": {"a": 1}, "metadata": {"m": 2}})
        bound.invoke({"log": []}, {"configurable": {"b": 3}})
        sub = lib.StateGraph(Log)
        sub.add_node("s", lambda state: {"log": ["s"]})
        sub.add_edge(lib.START, "s")
        sub_app = sub.compile()
        parent = _single(lib, sub_app).compile()
        form = lib.StateGraph(Form)
        form.add_node("f", lambda state: {})
        form.add_edge(lib.START, "f")
        schema = form.compile().get_input_jsonschema()
        return (
            seen,
            sorted(parent.nodes),
            parent.nodes["n"].subgraphs == [sub_app],
            app.get_output_jsonschema()["required"],
            sorted(schema["properties"]),
            sorted(schema["required"]),
        )

    both(program)


def test_bulk_update_state() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        builder = lib.StateGraph(Log)
        builder.add_node("a", lambda state: {"log": ["a"]})
        builder.add_node("b", lambda state: {"log": ["b"]})
        builder.add_edge(lib.START, "a")
        builder.add_edge("a", "b")
        app = builder.compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "1"}}
        app.bulk_update_state(
            config,
            [
                [lib.StateUpdate({"log": ["x"]}, "a")],
                [lib.StateUpdate({"log": ["y"]}, "a"), lib.StateUpdate({"log": ["z"]}, "b")],
            ],
        )
        state = app.get_state(config)
        with pytest.raises(ValueError):
            app.bulk_update_state(config, [])
        return state.values, state.next, len(list(app.get_state_history(config)))

    both(program)


def test_bulk_update_state_as_input() -> None:
    """as_node="__input__" writes the values as a graph input (a "input" checkpoint whose next task
    is __start__), then "__start__" runs that input into the state; the history matches a real run."""

    def program(lib: types.SimpleNamespace) -> Any:
        builder = lib.StateGraph(Log)
        builder.add_node("a", lambda state: {"log": ["a"]})
        builder.add_edge(lib.START, "a")
        app = builder.compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "1"}}
        turn = [
            [lib.StateUpdate({"log": ["in"]}, "__input__")],
            [lib.StateUpdate({"log": ["in"]}, "__start__")],
            [lib.StateUpdate({"log": ["a"]}, "a")],
        ]
        app.bulk_update_state(config, turn + turn)
        history = [(s.values, s.next, s.metadata["source"], s.metadata["step"]) for s in app.get_state_history(config)]
        app.update_state(config, {"log": ["more"]}, as_node="__input__")
        after = app.get_state(config)
        with pytest.raises(lib.InvalidUpdateError):
            app.bulk_update_state(config, [[lib.StateUpdate({}, "__input__"), lib.StateUpdate({}, "a")]])
        return history, after.values, after.next, app.invoke(None, config)

    both(program)


class Decision(pydantic.BaseModel):
    approved: bool


def test_interrupt_response_schema() -> None:
    """interrupt(value, response_schema=...): the Interrupt carries the JSON schema; the resume value
    is validated (and converted) by it, and an invalid one fails the run, leaving the interrupt pending."""

    def program(lib: types.SimpleNamespace) -> Any:
        class State(TypedDict):
            answer: Any

        def node(state: State) -> dict[str, Any]:
            first = lib.interrupt("first", response_schema={"type": "string"})  # a dict: not validated
            return {"answer": [first, lib.interrupt("approve?", response_schema=Decision)]}

        builder = lib.StateGraph(State)
        builder.add_node("node", node)
        builder.add_edge(lib.START, "node")
        app = builder.compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "1"}}
        first = app.invoke({"answer": None}, config)["__interrupt__"]
        second = app.invoke(lib.Command(resume=1), config)["__interrupt__"]
        with pytest.raises(pydantic.ValidationError):
            app.invoke(lib.Command(resume={"approved": "nope"}), config)
        pending = [(i.value, i.response_schema) for i in app.get_state(config).interrupts]
        done = app.invoke(lib.Command(resume={"approved": True}), config)
        made = lib.Interrupt("v", "id", response_schema={"type": "object"})
        return (
            [(i.value, i.response_schema) for i in (*first, *second)],
            pending,
            done,
            (made.value, made.id, made.response_schema, lib.Interrupt("v", "id").response_schema),
        )

    both(program)


def test_invalid_resume_lets_other_answered_tasks_finish() -> None:
    """An invalid resume value fails the run only once the step's other tasks finished: a task answered
    in the same resume keeps its writes (its side effect does not run again)."""

    def program(lib: types.SimpleNamespace) -> Any:
        sent: list[str] = []

        async def send(state: Log) -> dict[str, Any]:
            lib.interrupt("send?", response_schema=Decision)
            sent.append("email")
            await asyncio.sleep(0.02)
            return {"log": ["sent"]}

        async def check(state: Log) -> dict[str, Any]:
            lib.interrupt("check?", response_schema=Decision)
            return {"log": ["checked"]}

        builder = lib.StateGraph(Log)
        builder.add_node("send", send)
        builder.add_node("check", check)
        builder.add_edge(lib.START, "send")
        builder.add_edge(lib.START, "check")
        app = builder.compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "1"}}

        async def run() -> Any:
            await app.ainvoke({"log": []}, config)
            ids = {i.value: i.id for i in (await app.aget_state(config)).interrupts}
            answers = {ids["send?"]: {"approved": True}, ids["check?"]: {"approved": "nope"}}
            with pytest.raises(pydantic.ValidationError):
                await app.ainvoke(lib.Command(resume=answers), config)
            pending = [i.value for i in (await app.aget_state(config)).interrupts]
            done = await app.ainvoke(lib.Command(resume={ids["check?"]: {"approved": True}}), config)
            return pending, sorted(done["log"]), list(sent)

        return asyncio.run(run())

    both(program)


def test_custom_stream_mode() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        def inner(state: Log, writer) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            writer("from the subgraph")  # not in the parent's stream (LangGraph: only with subgraphs=True)
            return {"log": ["inner"]}

        sub = lib.StateGraph(Log)
        sub.add_node("inner", inner)
        sub.add_edge(lib.START, "inner")

        def first(state: Log) -> dict[str, Any]:
            lib.get_stream_writer()({"progress": 1})
            return {"log": ["first"]}

        builder = lib.StateGraph(Log)
        builder.add_node("first", first)
        builder.add_node("sub", sub.compile())
        builder.add_edge(lib.START, "first")
        builder.add_edge("first", "sub")
        app = builder.compile()
        mixed = list(app.stream({"log": []}, stream_mode=["custom", "updates"]))
        alone = list(app.stream({"log": []}, stream_mode="custom"))
        return mixed, alone, app.invoke({"log": []})

    both(program)
