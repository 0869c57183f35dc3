"""LangGraph's channel classes (DeltaChannel, UntrackedValue, AnyValue, LangGraph's constructors) and its
low-level Pregel / NodeBuilder API: the same programs on LangGraph and on agent_runtime."""

import importlib
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
import redis

import agent_runtime as ar
from agent_runtime.channels import MISSING

MODULES = {
    "langgraph": {
        "channels": "langgraph.channels",
        "graph": "langgraph.graph",
        "pregel": "langgraph.pregel",
        "types": "langgraph.types",
        "memory": "langgraph.checkpoint.memory",
    },
    "agent_runtime": {
        "channels": "agent_runtime.channels",
        "graph": "agent_runtime",
        "pregel": "agent_runtime.pregel",
        "types": "agent_runtime.types",
        "memory": "agent_runtime.checkpoint",
    },
}
NAMES = {
    "channels": ("DeltaChannel", "LastValue", "Topic", "EphemeralValue", "UntrackedValue", "AnyValue"),
    "graph": ("StateGraph", "START"),
    "pregel": ("Pregel", "NodeBuilder"),
    "types": ("Overwrite",),
}


def _lib(name: str) -> types.SimpleNamespace:
    modules = {key: importlib.import_module(path) for key, path in MODULES[name].items()}
    values = {n: getattr(modules[key], n) for key, names in NAMES.items() for n in names}
    saver = "InMemorySaver" if name == "langgraph" else "InMemoryCheckpointer"
    return types.SimpleNamespace(name=name, Saver=getattr(modules["memory"], saver), **values)


def both(program: Callable[[types.SimpleNamespace], Any]) -> Any:
    """Run `program(lib)` on each library; the results must be equal. Returns LangGraph's."""
    results = {name: program(_lib(name)) for name in MODULES}
    assert results["agent_runtime"] == results["langgraph"]
    return results["langgraph"]


def _extend(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    out = list(state)
    for write in writes:
        out.extend(write)
    return out


def _merge_files(state: dict[str, str], writes: Sequence[dict[str, str | None]]) -> dict[str, str]:
    out = dict(state)
    for write in writes:
        for path, content in write.items():
            if content is None:
                out.pop(path, None)
            else:
                out[path] = content
    return out


# -- channels -------------------------------------------------------------------------------------------


def test_delta_channel_updates_replays_and_overwrites() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        channel = lib.DeltaChannel(_extend).from_checkpoint(MISSING if lib.name == "agent_runtime" else None)
        seen = [channel.get()]
        channel.update([["a"], ["b", "c"]])
        seen.append(list(channel.get()))
        copy = channel.copy()
        channel.update([lib.Overwrite(["z"])])
        seen += [list(channel.get()), list(copy.get()), channel.snapshot_frequency]
        replayed = lib.DeltaChannel(_extend, list).from_checkpoint(["seed"])
        replayed.replay_writes([("t0", "k", ["x"]), ("t1", "k", lib.Overwrite(["y"])), ("t2", "k", ["w"])])
        seen.append(replayed.get())
        with pytest.raises(Exception) as raised:
            channel.update([lib.Overwrite([]), lib.Overwrite([])])
        return [*seen, type(raised.value).__name__, channel.update([])]

    assert both(program)[1] == ["a", "b", "c"]


def test_langgraph_channel_constructors() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        topic = lib.Topic(str, accumulate=True)
        topic.update(["a", ["b"]])
        untracked = lib.UntrackedValue(dict)
        untracked.update([{"k": 1}])
        any_value = lib.AnyValue(int)
        any_value.update([1, 1])
        cleared = any_value.copy()
        cleared.update([])
        return [
            lib.LastValue(int).ValueType,
            topic.ValueType,
            topic.UpdateType,
            topic.get(),
            untracked.get(),
            untracked.from_checkpoint(untracked.checkpoint()).is_available(),
            any_value.get(),
            cleared.is_available(),
        ]

    both(program)


class Files(TypedDict):
    files: Annotated[dict[str, str], Any]


def test_delta_channel_in_a_state_graph() -> None:
    """A dict DeltaChannel (its type from the annotation) over three turns, an Overwrite, get_state."""

    def program(lib: types.SimpleNamespace) -> Any:
        class State(TypedDict):
            files: Annotated[dict[str, str], lib.DeltaChannel(_merge_files)]
            items: Annotated[list[str], lib.DeltaChannel(_extend, snapshot_frequency=2)]

        turns = iter(range(10))

        def write(state: State) -> dict[str, Any]:
            n = next(turns)
            update: dict[str, Any] = {"files": {f"/f{n}": f"turn {n}", "/f0": None if n == 2 else "kept"}}
            return {**update, "items": lib.Overwrite(["reset"]) if n == 1 else [f"i{n}", str(len(state["items"]))]}

        builder = lib.StateGraph(State)
        builder.add_node("write", write)
        builder.add_edge(lib.START, "write")
        app = builder.compile(checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "t"}}
        results = [app.invoke({"items": [f"in{i}"]}, config) for i in range(3)]
        return results, app.get_state(config).values, [s.values for s in app.get_state_history(config)]

    both(program)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ar.BaseCheckpointer]:
    if request.param == "memory":
        yield ar.InMemoryCheckpointer()
    elif request.param == "sqlite":
        sqlite_saver = ar.SqliteCheckpointer(str(tmp_path / "cp.db"))
        yield sqlite_saver
        sqlite_saver.close()
    else:
        client = redis.Redis(host="127.0.0.1", port=6379, db=0)
        prefix = f"test-delta-{uuid.uuid4().hex}"
        yield ar.RedisCheckpointer(client, prefix=prefix)
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)


def test_delta_channel_round_trips_on_every_checkpointer(saver: ar.BaseCheckpointer) -> None:
    class State(TypedDict):
        items: Annotated[list[str], ar.channels.DeltaChannel(_extend)]

    def program(checkpointer: Any, lib: types.SimpleNamespace) -> Any:
        builder = lib.StateGraph(State if lib.name == "agent_runtime" else _lg_delta_state())
        builder.add_node("a", lambda s: {"items": [f"a{len(s['items'])}"]})
        builder.add_edge(lib.START, "a")
        app = builder.compile(checkpointer=checkpointer)
        config = {"configurable": {"thread_id": "t"}}
        out = [app.invoke({"items": ["x"]}, config) for _ in range(2)]
        return out, app.get_state(config).values

    ours = program(saver, _lib("agent_runtime"))
    assert ours == program(_lib("langgraph").Saver(), _lib("langgraph"))
    assert ours[1] == {"items": ["x", "a1", "x", "a3"]}


def _lg_delta_state() -> type[Any]:
    from langgraph.channels import DeltaChannel

    class State(TypedDict):
        items: Annotated[list[str], DeltaChannel(_extend)]

    return State


# -- Pregel / NodeBuilder -----------------------------------------------------------------------------


def _chain(lib: types.SimpleNamespace, **kwargs: Any) -> Any:
    """input -> one (+1) -> inbox -> two (*10) -> output, plus a fixed and a mapped write."""
    return lib.Pregel(
        nodes={
            "one": lib.NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
            "two": lib.NodeBuilder()
            .subscribe_only("inbox")
            .do(lambda x: x * 10)
            .write_to("output", fixed=5, plus_one=lambda x: x + 1),
        },
        channels={
            "input": lib.LastValue(int),
            "inbox": lib.LastValue(int),
            "output": lib.LastValue(int),
            "fixed": lib.EphemeralValue(int),
            "plus_one": lib.LastValue(int),
        },
        input_channels="input",
        **kwargs,
    )


def test_pregel_node_builder_invoke_and_streams() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        single = _chain(lib, output_channels="output")
        several = _chain(lib, output_channels=["output", "fixed", "plus_one"])
        return (
            single.invoke(2),
            several.invoke(2),
            list(single.stream(2)),
            list(several.stream(2, stream_mode="updates")),
        )

    assert both(program)[:2] == (30, {"output": 30, "fixed": 5, "plus_one": 31})


def test_pregel_subscribe_to_read_from_and_topics() -> None:
    """Fan-out into a Topic, a node reading a dict of several channels, a loop that stops itself."""

    def program(lib: types.SimpleNamespace) -> Any:
        app = lib.Pregel(
            nodes={
                "double": lib.NodeBuilder().subscribe_only("start").do(lambda x: x * 2).write_to("values"),
                "triple": lib.NodeBuilder().subscribe_only("start").do(lambda x: x * 3).write_to("values"),
                "sum": lib.NodeBuilder()
                .subscribe_to("values")
                .read_from("start")
                .do(lambda d: sum(d["values"]) + d["start"])
                .write_to("total"),
                "half": lib.NodeBuilder()
                .subscribe_to("total", read=False)
                .read_from("total", "start")
                .do(lambda d: d["total"] // d["start"])
                .write_to("ratio"),
            },
            channels={
                "start": lib.LastValue(int),
                "values": lib.Topic(int),
                "total": lib.LastValue(int),
                "ratio": lib.AnyValue(int),
            },
            input_channels=["start"],
            output_channels=["total", "values", "ratio"],
        )
        return app.invoke({"start": 2}), list(app.stream({"start": 3}, stream_mode="updates"))

    both(program)


def test_pregel_with_a_checkpointer() -> None:
    def program(lib: types.SimpleNamespace) -> Any:
        app = _chain(lib, output_channels="output", checkpointer=lib.Saver())
        config = {"configurable": {"thread_id": "t"}}
        first = app.invoke(1, config)
        second = app.invoke(4, config)
        state = app.get_state(config)
        return first, second, state.values, state.next, [s.next for s in app.get_state_history(config)]

    both(program)
