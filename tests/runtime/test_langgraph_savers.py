"""LangGraph's own checkpointers (langgraph-checkpoint's InMemorySaver, SqliteSaver, PostgresSaver on a
real PostgreSQL) run agent_runtime graphs, and a thread saved by either runtime resumes in the other
with the same state and the same next steps as when LangGraph resumes it."""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypedDict

import langgraph.graph as lg_graph
import langgraph.types as lg_types
import pytest
from langgraph.checkpoint.memory import InMemorySaver as LangGraphInMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

import agent_runtime as ar
from agent_runtime.checkpoint.memory import InMemorySaver
from tests.postgres_target import fresh_database, postgres_server


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    count: int


def _graph(api: Any, send: Any, interrupt: Any) -> Any:
    """A Send fan-out, then a node that asks a question: a thread paused inside with Sends in its history."""
    g = api.StateGraph(State)
    g.add_node("plan", lambda s: {"log": ["plan"], "count": s["count"] + 1})
    g.add_node("work", lambda s: {"log": [f"work:{s['count']}"]})
    g.add_node("ask", lambda s: {"log": [f"ask:{interrupt('ok?')}"]})
    g.add_edge(api.START, "plan")
    g.add_conditional_edges("plan", lambda s: [send("work", s)], ["work"])
    g.add_edge("work", "ask")
    g.add_edge("ask", api.END)
    return g


LANGGRAPH = (_graph(lg_graph, lg_types.Send, lg_types.interrupt), lg_types.Command)
AGENT_RUNTIME = (_graph(ar, ar.Send, ar.interrupt), ar.Command)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield LangGraphInMemorySaver()
    elif request.param == "sqlite":
        conn = sqlite3.connect(tmp_path / "threads.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()
    else:
        with PostgresSaver.from_conn_string(fresh_database(request.getfixturevalue("postgres_url"))) as pg:
            pg.setup()
            yield pg


def _turns(first: tuple[Any, Any], second: tuple[Any, Any], saver: Any, thread: str) -> list[Any]:
    """Pause a thread in `first`, read it and resume it (twice, with a new input between) in `second`."""
    config = {"configurable": {"thread_id": thread}}
    starter, resumer = first[0].compile(checkpointer=saver), second[0].compile(checkpointer=saver)
    command = second[1]
    paused = starter.invoke({"log": [], "count": 0}, config)
    state = resumer.get_state(config)
    return [
        paused["log"],
        state.values,
        state.next,
        resumer.invoke(command(resume="yes"), config),
        resumer.invoke({"log": ["again"], "count": 5}, config)["log"],
        resumer.get_state(config).next,
        resumer.invoke(command(resume="no"), config),
        len(list(resumer.get_state_history(config))),
    ]


def test_a_thread_saved_by_langgraph_resumes_in_agent_runtime(saver: Any) -> None:
    expected = _turns(LANGGRAPH, LANGGRAPH, saver, "langgraph-only")
    assert _turns(LANGGRAPH, AGENT_RUNTIME, saver, "langgraph-then-ours") == expected
    assert expected[3] == {"log": ["plan", "work:1", "ask:yes"], "count": 1}


def test_a_thread_saved_by_agent_runtime_resumes_in_langgraph(saver: Any) -> None:
    expected = _turns(LANGGRAPH, LANGGRAPH, saver, "langgraph-only")
    assert _turns(AGENT_RUNTIME, LANGGRAPH, saver, "ours-then-langgraph") == expected


def test_checkpoints_are_saved_in_langgraphs_format(saver: Any) -> None:
    config = {"configurable": {"thread_id": "t"}}
    AGENT_RUNTIME[0].compile(checkpointer=saver).invoke({"log": [], "count": 0}, config)
    saved = saver.get_tuple(config)
    raw = saved.checkpoint
    assert raw["v"] == 4
    assert datetime.fromisoformat(raw["ts"]).tzinfo is not None
    assert raw["channel_values"]["log"] == ["plan", "work:1"]
    assert all(isinstance(v, str) for v in raw["channel_versions"].values())  # the saver's own versions
    assert saved.metadata["step"] == 2
    assert {c for _, c, _ in saved.pending_writes} == {"__interrupt__"}
    assert [type(i).__module__ for _, _, w in saved.pending_writes for i in w] == ["langgraph.types"]


class _CountingVersions(LangGraphInMemorySaver):
    """A saver that overrides LangGraph's version hook (integers counted from 100)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def get_next_version(self, current: Any, channel: None) -> Any:
        self.calls += 1
        return 100 + (0 if current is None else int(str(current).split(".")[0]) % 100) + 1


def test_an_overridden_get_next_version_is_used() -> None:
    saver = _CountingVersions()
    config = {"configurable": {"thread_id": "t"}}
    graph = AGENT_RUNTIME[0].compile(checkpointer=saver)
    graph.invoke({"log": [], "count": 0}, config)
    assert saver.calls >= 3
    assert set(saver.get_tuple(config).checkpoint["channel_versions"].values()) <= set(range(101, 200))
    assert graph.invoke(ar.Command(resume="yes"), config)["log"] == ["plan", "work:1", "ask:yes"]


def test_our_memory_saver_stores_values_through_a_serde() -> None:
    class Recording(JsonPlusSerializer):
        def __init__(self) -> None:
            super().__init__()
            self.dumped: list[tuple[str, bytes]] = []

        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            typed = super().dumps_typed(obj)
            self.dumped.append(typed)
            return typed

    serde = Recording()
    config = {"configurable": {"thread_id": "t"}}
    graph = AGENT_RUNTIME[0].compile(checkpointer=InMemorySaver(serde=serde))
    graph.invoke({"log": [], "count": 0}, config)
    assert graph.invoke(ar.Command(resume="yes"), config) == {"log": ["plan", "work:1", "ask:yes"], "count": 1}
    assert any(serde.loads_typed(typed) == ["plan", "work:1"] for typed in serde.dumped)
