"""Differential tests of what agent_runtime added on LangChain callbacks: the `"messages"` and `"tools"`
stream modes (chat model tokens, messages nodes return, tool events; namespaces of subgraphs, of graphs
streamed or invoked inside a node, of `@task` calls), `push_message`, tracers seeing the graph, its
nodes and what they call, `TracePolicy`, graph lifecycle callbacks and `astream_events(version="v2")`.
Each program runs on LangGraph and on agent_runtime; what a user sees must be the same, up to what
differs by nature (ids). Also: a run without callbacks builds none."""

from __future__ import annotations

import asyncio
import importlib
import sys
import types
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

MODULES = {
    "langgraph": {
        "graph": "langgraph.graph",
        "message": "langgraph.graph.message",
        "types": "langgraph.types",
        "interrupt": "langgraph.types",
        "func": "langgraph.func",
        "callbacks": "langgraph.callbacks",
        "memory": "langgraph.checkpoint.memory",
    },
    "agent_runtime": {
        "graph": "agent_runtime",
        "message": "agent_runtime.graph.message",
        "types": "agent_runtime.types",
        "interrupt": "agent_runtime",
        "func": "agent_runtime.func",
        "callbacks": "agent_runtime.callbacks",
        "memory": "agent_runtime",
    },
}
NAMES = {
    "graph": ("StateGraph", "START", "END"),
    "message": ("push_message", "MessagesState"),
    "types": ("TracePolicy",),
    "interrupt": ("Command", "interrupt"),
    "func": ("task", "entrypoint"),
    "callbacks": ("GraphCallbackHandler",),
}
Lib = types.SimpleNamespace


def _lib(name: str) -> Lib:
    modules = {key: importlib.import_module(path) for key, path in MODULES[name].items()}
    values = {n: getattr(modules[key], n) for key, names in NAMES.items() for n in names}
    saver = "InMemorySaver" if name == "langgraph" else "InMemoryCheckpointer"
    return types.SimpleNamespace(name=name, Saver=getattr(modules["memory"], saver), **values)


def both(program: Any) -> Any:
    """Run `program(lib)` on each library; the results must be equal. Returns agent_runtime's."""
    results = {name: program(_lib(name)) for name in MODULES}
    assert results["agent_runtime"] == results["langgraph"]
    return results["agent_runtime"]


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def chat_and_echo(state: Any) -> dict[str, Any]:
    echo.invoke({"text": "done"})
    return {"messages": [GenericFakeChatModel(messages=iter(["one two"])).invoke("hi")]}


async def achat_and_echo(state: Any) -> dict[str, Any]:
    await echo.ainvoke({"text": "done"})
    return {"messages": [await GenericFakeChatModel(messages=iter(["one two"])).ainvoke("hi")]}


def _segments(ns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(segment.split(":")[0] for segment in ns)


def _summary(ns: tuple[str, ...], mode: str, data: Any) -> tuple[Any, ...]:
    """What a chunk shows, without ids: its graph, and the token's text or the tool event."""
    if mode == "messages":
        message, metadata = data
        return _segments(ns), message.content, metadata["langgraph_node"], metadata.get("tags")
    return _segments(ns), data["event"], data.get("tool_name"), data.get("input"), data.get("output", "")


def _one_node(lib: Lib, fn: Any, name: str = "node") -> Any:
    return lib.StateGraph(lib.MessagesState).add_node(name, fn).add_edge(lib.START, name).compile()


def test_messages_and_tools_of_a_node() -> None:
    def program(lib: Lib) -> Any:
        model = GenericFakeChatModel(messages=iter(["a b"]), tags=["meow"])

        def call(state: Any) -> dict[str, Any]:
            echo.invoke({"text": "x"})
            return {"messages": [model.invoke(state["messages"]), AIMessage("node says", id="n1")]}

        graph = _one_node(lib, call)
        chunks = graph.stream({"messages": "hi"}, stream_mode=["messages", "tools", "updates"], subgraphs=True)
        shown = []
        for ns, mode, data in chunks:
            if mode == "updates":
                shown.append(("updates", [m.content for m in data["node"]["messages"]]))
            else:
                shown.append(_summary(ns, mode, data))
        return shown

    shown = both(program)
    assert [s[1] for s in shown if s[0] == ()][:2] == ["tool-started", "tool-finished"]


def test_messages_metadata_matches() -> None:
    keys = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path", "ls_provider", "tags")

    def program(lib: Lib) -> Any:
        model = GenericFakeChatModel(messages=iter(["foo"]), tags=["meow"])
        graph = _one_node(lib, lambda state: {"messages": model.invoke(state["messages"])}, "call_model")
        config = {"configurable": {"thread_id": "t", "assistant_id": "a", "some_api_key": "secret"}}
        out = []
        for _, metadata in graph.stream({"messages": "hi"}, config, stream_mode="messages"):
            out.append(({k: metadata.get(k) for k in keys}, _segments((metadata["langgraph_checkpoint_ns"],))))
            out.append((metadata["thread_id"], metadata["assistant_id"], "some_api_key" in metadata))
        return out

    both(program)


@pytest.mark.parametrize("subgraphs", [False, True])
def test_subgraph_messages_namespaces(subgraphs: bool) -> None:
    def program(lib: Lib) -> Any:
        sub = _one_node(lib, chat_and_echo, "inner")
        parent = lib.StateGraph(lib.MessagesState).add_node("sub", sub).add_edge(lib.START, "sub").compile()
        chunks = parent.stream({"messages": []}, stream_mode=["messages", "tools"], subgraphs=True)
        return [_summary(ns, mode, data) for ns, mode, data in chunks] if subgraphs else None

    both(program)


@pytest.mark.parametrize("child_config", [None, {"configurable": {"thread_id": "child"}}], ids=["as_subgraph", "own"])
def test_graph_streamed_inside_a_node(child_config: dict[str, Any] | None) -> None:
    def program(lib: Lib) -> Any:
        child = _one_node(lib, chat_and_echo, "inner")
        received: list[Any] = []

        def node(state: Any) -> dict[str, Any]:
            received.extend(
                mode for mode, _ in child.stream({"messages": []}, child_config, stream_mode=["messages", "tools"])
            )
            return {}

        outer = _one_node(lib, node)
        chunks = outer.stream(
            {"messages": []}, {"configurable": {"thread_id": "p"}}, stream_mode=["messages", "tools"], subgraphs=True
        )
        return [_summary(ns, mode, data) for ns, mode, data in chunks], received

    both(program)


def test_task_calls_stream_in_their_callers_graph() -> None:
    async def program_async(lib: Lib) -> Any:
        @lib.task
        async def inner() -> None:
            await achat_and_echo({})

        @lib.task
        async def outer() -> None:
            await inner()

        @lib.entrypoint()
        async def workflow(inputs: dict[str, Any]) -> None:
            await outer()

        chunks = workflow.astream({}, stream_mode=["messages", "tools"], subgraphs=True)
        return [_summary(ns, mode, data) async for ns, mode, data in chunks]

    both(lambda lib: asyncio.run(program_async(lib)))


def test_push_message() -> None:
    def program(lib: Lib) -> Any:
        def node(state: Any) -> dict[str, Any]:
            lib.push_message(AIMessage("pushed", id="p1"))
            return {}

        chunks = list(_one_node(lib, node).stream({"messages": []}, stream_mode=["messages", "values"]))
        return [
            (mode, data[0].content if mode == "messages" else [m.content for m in data["messages"]])
            for mode, data in chunks
        ]

    both(program)


class Recorder(BaseCallbackHandler):
    """The chain, model and tool runs a handler sees: (event, name, parent's name)."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}
        self.events: list[tuple[str, str, str | None]] = []

    def _start(self, kind: str, name: str, run_id: Any, parent_run_id: Any) -> None:
        self.names[run_id] = name
        self.events.append((kind, name, self.names.get(parent_run_id)))

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: Any, parent_run_id: Any = None, **kw: Any
    ) -> None:
        self._start("chain", kw["name"], run_id, parent_run_id)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, parent_run_id: Any = None, **kw: Any
    ) -> None:
        self._start("chat_model", "model", run_id, parent_run_id)

    def on_tool_start(
        self, serialized: Any, input_str: Any, *, run_id: Any, parent_run_id: Any = None, **kw: Any
    ) -> None:
        self._start("tool", serialized["name"], run_id, parent_run_id)


def test_callbacks_see_the_graph_nodes_and_what_they_call() -> None:
    def program(lib: Lib) -> Any:
        recorder = Recorder()
        _one_node(lib, chat_and_echo).invoke({"messages": []}, {"callbacks": [recorder]})
        # LangGraph also reports the hidden __start__ task and the writers' runs; agent_runtime does not
        return [e for e in recorder.events if e[1] not in ("__start__", "_write", "ChannelWrite<...>")]

    assert both(program) == [
        ("chain", "LangGraph", None),
        ("chain", "node", "LangGraph"),
        ("tool", "echo", "node"),
        ("chat_model", "model", "node"),
    ]


def test_trace_policy() -> None:
    def program(lib: Lib) -> Any:
        from langchain_core.tracers import BaseTracer

        class Tracer(BaseTracer):
            def __init__(self) -> None:
                super().__init__()
                self.recorded: dict[str, Any] = {}

            def _persist_run(self, run: Any) -> None:
                pass

            def _on_chain_end(self, run: Any) -> None:
                self.recorded[run.name] = (run.inputs, run.outputs)

        policy = lib.TracePolicy(process_inputs=lambda _: {"in": "scrubbed"}, process_outputs=lambda _: {"out": 1})
        tracer = Tracer()
        graph = lib.StateGraph(lib.MessagesState).add_node("n", lambda s: {"messages": []}, trace_policy=policy)
        output = graph.add_edge(lib.START, "n").compile().invoke({"messages": []}, {"callbacks": [tracer]})
        return tracer.recorded["n"], output

    both(program)


def test_graph_lifecycle_callbacks() -> None:
    def program(lib: Lib) -> Any:
        seen: list[Any] = []

        class Handler(lib.GraphCallbackHandler):
            def on_interrupt(self, event: Any) -> None:
                seen.append(("interrupt", event.status, event.checkpoint_ns, [i.value for i in event.interrupts]))

            def on_resume(self, event: Any) -> None:
                seen.append(("resume", event.status, event.checkpoint_ns))

        graph = lib.StateGraph(lib.MessagesState).add_node(
            "ask", lambda s: {"messages": [("user", lib.interrupt("q?"))]}
        )
        app = graph.add_edge(lib.START, "ask").compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "t"}, "callbacks": [Handler()]}
        app.invoke({"messages": []}, config)
        app.invoke(lib.Command(resume="a"), config)
        return seen

    both(program)


def test_astream_events_v2() -> None:
    async def program_async(lib: Lib) -> Any:
        graph = _one_node(lib, achat_and_echo)
        events = [e async for e in graph.astream_events({"messages": []}, version="v2")]
        kept = (
            "on_chain_start",
            "on_chain_end",
            "on_chat_model_start",
            "on_chat_model_end",
            "on_tool_start",
            "on_tool_end",
        )
        return [
            (e["event"], e["name"]) for e in events if e["event"] in kept and e["name"] not in ("__start__", "_write")
        ]

    both(lambda lib: asyncio.run(program_async(lib)))


def test_a_run_without_callbacks_builds_none() -> None:
    code = (
        "import sys, agent_runtime as ar\n"
        "g = ar.StateGraph(dict).add_node('n', lambda s: {}).add_edge(ar.START, 'n').compile()\n"
        "g.invoke({})\n"
        "assert 'langchain_core' not in sys.modules, 'a run without callbacks imported langchain-core'\n"
    )
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True)
