"""Differential tests of details LangGraph users read: a single-value state's task results in history,
a dict of runnables as a node, the saved checkpoint (LangGraph's dict and tuple compare equal to ours),
the debug checkpoint events of a run with durability="exit", and PregelNode(writers=...)."""

from __future__ import annotations

import operator
import types
from typing import Annotated, Any, TypedDict

from conftest import LIBS
from langchain_core.runnables import RunnableLambda

from agent_runtime.channels import EphemeralValue, LastValue
from agent_runtime.pregel.main import ChannelWriteEntry, Pregel, PregelNode

Lib = types.SimpleNamespace


def _root_graph(lib: Lib) -> Any:
    """A graph whose state is one list (no dict), run to its end with a checkpointer."""
    g = lib.StateGraph(Annotated[list, operator.add])
    g.add_node("one", lambda state: ["one"])
    g.add_edge(lib.START, "one")
    return g.compile(checkpointer=lib.MemorySaver())


def _history_results(lib: Lib) -> list[tuple[str, Any]]:
    app = _root_graph(lib)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke(["in"], cfg)
    return [(t.name, t.result) for s in app.get_state_history(cfg) for t in s.tasks]


def test_a_single_value_state_shows_task_results_as_values() -> None:
    ours, theirs = _history_results(LIBS["agent_runtime"]()), _history_results(LIBS["langgraph"]())
    assert ours == theirs == [("one", ["one"]), ("__start__", ["in"])]


class _XY(TypedDict):
    x: int
    doubled: int


def test_a_dict_of_runnables_is_a_node() -> None:
    """LangGraph runs `add_node("n", {"key": runnable})` as a RunnableParallel: its dict is the update."""

    def run(lib: Lib) -> Any:
        g = lib.StateGraph(_XY)
        g.add_node("n", {"doubled": RunnableLambda(lambda s: s["x"] * 2)})
        g.add_edge(lib.START, "n")
        return g.compile().invoke({"x": 2, "doubled": 0})

    assert run(LIBS["agent_runtime"]()) == run(LIBS["langgraph"]()) == {"x": 2, "doubled": 4}


def _saved(lib: Lib) -> Any:
    app = _root_graph(lib)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke(["in"], cfg)
    return app.checkpointer.get_tuple(cfg)


def test_a_saved_checkpoint_equals_langgraphs_form_of_it() -> None:
    """`get_tuple` gives a named tuple whose checkpoint compares equal to LangGraph's v4 dict of it (the
    input task's empty versions_seen entry and the sorted updated channels included)."""
    from langgraph.checkpoint.base import CheckpointTuple as LangGraphTuple

    ours, theirs = _saved(LIBS["agent_runtime"]()), _saved(LIBS["langgraph"]())
    assert set(ours.checkpoint["versions_seen"]) == set(theirs.checkpoint["versions_seen"])
    as_theirs: Any = ours.checkpoint.as_langgraph()
    assert set(as_theirs) == set(theirs.checkpoint)
    assert ours == LangGraphTuple(ours.config, as_theirs, ours.metadata, ours.parent_config, [])
    assert ours.checkpoint == as_theirs


def _exit_debug_parents(lib: Lib) -> list[tuple[int, bool]]:
    """(step, has a parent) of each debug checkpoint event of a second run on the thread, durability exit."""
    app = _root_graph(lib)
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke(["a"], cfg, durability="exit")
    events = app.stream(["b"], cfg, stream_mode="debug", durability="exit")
    return [(e["step"], e["payload"]["parent_config"] is not None) for e in events if e["type"] == "checkpoint"]


def test_exit_durability_checkpoint_events_name_no_unwritten_parent() -> None:
    ours, theirs = _exit_debug_parents(LIBS["agent_runtime"]()), _exit_debug_parents(LIBS["langgraph"]())
    assert ours == theirs


def test_pregel_node_writers_run_after_bound() -> None:
    node = PregelNode(
        channels="input",
        triggers=("input",),
        bound=RunnableLambda(lambda x: x + 1),  # type: ignore[arg-type]
        writers=[RunnableLambda(lambda x: x * 10)],  # type: ignore[list-item]
        writes=(ChannelWriteEntry("output"),),
    )
    app = Pregel(
        nodes={"n": node},
        channels={"input": EphemeralValue(int), "output": LastValue(int)},
        input_channels="input",
        output_channels="output",
    )
    assert app.invoke(1) == 20
