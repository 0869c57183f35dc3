"""Differential tests of LangGraph's subgraph state and time travel: stateful subgraphs
(`compile(checkpointer=True)`), a parent replay restoring a subgraph's earlier state, time travel into
a subgraph checkpoint (`checkpoint_map`), `update_state(as_node="__copy__")`, the interrupts a step
records, and strict resume. Each program runs on LangGraph and on agent_runtime; what a user sees must
be the same."""

from __future__ import annotations

import operator
import types
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from conftest import LIBS

Lib = types.SimpleNamespace


class Trail(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]


class Turns(TypedDict, total=False):
    turns: Annotated[list[str], operator.add]


def _both(program: Callable[[Lib], Any]) -> tuple[Any, Any]:
    return program(LIBS["langgraph"]()), program(LIBS["agent_runtime"]())


def _plain(value: Any) -> Any:
    """Interrupts by value (their ids differ between the libraries), everything else as is."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", _plain(value.value))
    return value


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _stateful_parent(lib: Lib, seen: list[list[str]], *, ask: bool = False) -> Any:
    def step(state: Trail) -> Trail:
        seen.append(list(state.get("trail", [])))
        answer = lib.interrupt("more?") if ask else "s"
        return {"trail": [answer]}

    sub = lib.StateGraph(Trail)
    sub.add_node("step", step)
    sub.add_edge(lib.START, "step")
    parent = lib.StateGraph(Turns)
    parent.add_node("turn", lambda s: {"turns": ["t"]})
    parent.add_node("sub", sub.compile(checkpointer=True))
    parent.add_edge(lib.START, "turn")
    parent.add_edge("turn", "sub")
    return parent.compile(checkpointer=lib.MemorySaver())


def _stateful_turns(lib: Lib) -> Any:
    seen: list[list[str]] = []
    app, cfg = _stateful_parent(lib, seen), _cfg("stateful")
    app.invoke({"turns": []}, cfg)
    app.invoke({"turns": []}, cfg)
    app.invoke({"turns": []}, cfg)
    second_turn = [h for h in app.get_state_history(cfg) if h.next == ("sub",)][1]
    app.invoke(None, second_turn.config)  # the replayed turn sees the subgraph as it was then
    sub_state = app.get_state(cfg, subgraphs=True).tasks
    return seen, [s.state.values for s in sub_state], app.get_state(cfg).values


def test_a_stateful_subgraph_keeps_its_state_and_a_replay_restores_an_earlier_one() -> None:
    theirs, ours = _both(_stateful_turns)
    assert ours == theirs
    assert ours[0] == [[], ["s"], ["s", "s"], ["s"]]


def _into_a_subgraph_checkpoint(lib: Lib) -> Any:
    seen: list[list[str]] = []
    app, cfg = _stateful_parent(lib, seen, ask=True), _cfg("into")
    first = app.invoke({"turns": []}, cfg)
    at_question = app.get_state(cfg, subgraphs=True).tasks[0].state.config
    done = app.invoke(lib.Command(resume="a"), cfg)
    again = app.invoke(None, at_question)  # time travel to the subgraph's checkpoint: asks again
    resumed = app.invoke(lib.Command(resume="b"), cfg)
    return _plain([first, done, again, resumed, seen, sorted(at_question["configurable"]["checkpoint_map"])])


def test_running_the_root_with_a_subgraph_checkpoint_time_travels_into_it() -> None:
    theirs, ours = _both(_into_a_subgraph_checkpoint)
    assert ours == theirs
    assert ours[2]["__interrupt__"] == [("Interrupt", "more?")]


def _parallel_questions(lib: Lib) -> Any:
    g = lib.StateGraph(Trail)
    g.add_node("a", lambda s: {"trail": [f"a:{lib.interrupt('A')}"]})
    g.add_node("b", lambda s: {"trail": [f"b:{lib.interrupt('B')}"]})
    g.add_node("c", lambda s: {"trail": ["c"]})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge("a", "c")
    app, cfg = g.compile(checkpointer=lib.MemorySaver()), _cfg("parallel")
    app.invoke({"trail": []}, cfg)
    asked = {i.value: i.id for i in app.get_state(cfg).interrupts}
    app.invoke(lib.Command(resume={asked["A"]: "yes"}), cfg)
    live = app.get_state(cfg)
    record = app.get_state(live.config)
    copy = app.update_state(live.config, None, as_node="__copy__")
    copied = app.get_state(copy)
    history = [(h.metadata["source"], h.next, _plain(h.interrupts)) for h in app.get_state_history(cfg)]
    return _plain(
        [
            live.next,
            live.interrupts,
            [(t.name, t.result, t.interrupts) for t in live.tasks],
            sorted(i.value for i in record.interrupts),
            (copied.metadata["source"], copied.parent_config == live.parent_config, copied.values),
            history,
        ]
    )


def test_the_step_record_keeps_answered_questions_and_copy_forks_a_sibling() -> None:
    theirs, ours = _both(_parallel_questions)
    assert ours == theirs
    assert ours[3] == ["A", "B"]  # the record lists both; get_state only the pending one
