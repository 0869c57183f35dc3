"""Checkpointers (memory, SQLite, real Redis): threads, history, interrupts, crash-resume, isolation."""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

import agent_runtime as ar
from tests.redis_target import redis_client, redis_url


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    items: list[str]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ar.BaseCheckpointer]:
    if request.param == "memory":
        yield ar.InMemoryCheckpointer()
    elif request.param == "sqlite":
        sqlite_saver = ar.SqliteCheckpointer(str(tmp_path / "cp.db"))
        yield sqlite_saver
        sqlite_saver.close()
    else:
        client = redis_client(redis_url(0))  # a RedisCluster on the suite's cluster target
        prefix = f"test-agent-runtime-{uuid.uuid4().hex}"
        yield ar.RedisCheckpointer(client, prefix=prefix)
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


def _interrupting(saver: ar.BaseCheckpointer) -> ar.CompiledGraph:
    def ask(state: State) -> dict[str, Any]:
        return {"log": [f"answer:{ar.interrupt('question')}"]}

    g = ar.StateGraph(State)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("ask", ask)
    g.add_node("sibling", lambda s: {"log": ["sibling"]})
    g.add_edge(ar.START, "a")
    g.add_edge("a", "ask")
    g.add_edge("a", "sibling")
    return g.compile(checkpointer=saver)


def _a_then_b(saver: ar.BaseCheckpointer) -> ar.CompiledGraph:
    g = ar.StateGraph(State)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(ar.START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


def test_interrupt_and_resume(saver: ar.BaseCheckpointer) -> None:
    app, cfg = _interrupting(saver), _cfg()
    out = app.invoke({"log": []}, cfg)
    (pending,) = out["__interrupt__"]
    assert pending.value == "question"
    snapshot = app.get_state(cfg)
    assert snapshot.next == ("ask",) and snapshot.values["log"] == ["a", "sibling"]
    assert snapshot.tasks[0].interrupts[0].id == pending.id
    assert app.invoke(ar.Command(resume="42"), cfg)["log"] == ["a", "answer:42", "sibling"]
    assert app.get_state(cfg).next == ()
    assert app.last_run_report is not None and app.last_run_report.stop_reason is ar.StopReason.GOAL


def test_resume_by_interrupt_id_with_two_pending(saver: ar.BaseCheckpointer) -> None:
    g = ar.StateGraph(State)
    g.add_node("x", lambda s: {"log": [f"x:{ar.interrupt('x?')}"]})
    g.add_node("y", lambda s: {"log": [f"y:{ar.interrupt('y?')}"]})
    g.add_edge(ar.START, "x")
    g.add_edge(ar.START, "y")
    app, cfg = g.compile(checkpointer=saver), _cfg()
    interrupts = {i.value: i.id for i in app.invoke({"log": []}, cfg)["__interrupt__"]}
    with pytest.raises(RuntimeError, match="interrupt id"):
        app.invoke(ar.Command(resume="both"), cfg)
    out = app.invoke(ar.Command(resume={interrupts["x?"]: 1, interrupts["y?"]: 2}), cfg)
    assert out["log"] == ["x:1", "y:2"]


def test_history_and_threads(saver: ar.BaseCheckpointer) -> None:
    app = _a_then_b(saver)
    one, two = _cfg(), _cfg()
    app.invoke({"log": ["1"]}, one)
    app.invoke({"log": ["2"]}, two)
    app.invoke({"log": ["1b"]}, one)
    assert app.get_state(one).values["log"] == ["1", "a", "b", "1b", "a", "b"]
    assert app.get_state(two).values["log"] == ["2", "a", "b"]
    history = list(app.get_state_history(one))
    assert [h.metadata["step"] for h in history] == [6, 5, 4, 3, 2, 1, 0, -1]
    assert [h.metadata["source"] for h in history][-1] == "input"
    assert history[0].parent_config == history[1].config
    assert len(list(app.get_state_history(one, limit=2))) == 2
    before = saver.list(one, before=history[2].config)  # as LangGraph's: the checkpoints saved before it
    assert [t.config for t in before] == [h.config for h in history[3:]]
    assert [t.config for t in saver.list(one, before=history[2].config, limit=1)] == [history[3].config]
    page = app.get_state_history(one, before=history[2].config, limit=2)
    assert [h.config for h in page] == [h.config for h in history[3:5]]
    inputs = app.get_state_history(one, filter={"source": "input"})
    assert [h.metadata["step"] for h in inputs] == [3, -1]
    saver.delete_thread(one["configurable"]["thread_id"])
    assert app.get_state(one).values == {}
    assert app.get_state(two).values["log"] == ["2", "a", "b"]


def test_failed_node_reruns_alone_on_resume(saver: ar.BaseCheckpointer) -> None:
    calls = {"sibling": 0, "fragile": 0}
    broken = {"on": True}

    def sibling(state: State) -> dict[str, Any]:
        calls["sibling"] += 1
        return {"log": ["sibling"]}

    def fragile(state: State) -> dict[str, Any]:
        calls["fragile"] += 1
        if broken["on"]:
            time.sleep(0.1)  # the sibling (its own thread) finishes first: the race is not what is tested
            raise RuntimeError("crash")
        return {"log": ["fragile"]}

    g = ar.StateGraph(State)
    g.add_node("sibling", sibling)
    g.add_node("fragile", fragile)
    g.add_edge(ar.START, "sibling")
    g.add_edge(ar.START, "fragile")
    app, cfg = g.compile(checkpointer=saver), _cfg()
    with pytest.raises(RuntimeError, match="crash"):
        app.invoke({"log": []}, cfg)
    assert app.last_run_report is not None and app.last_run_report.stop_reason is ar.StopReason.ERROR
    assert app.get_state(cfg).next == ("fragile",)
    assert app.get_state(cfg).tasks[0].error is not None
    broken["on"] = False
    assert app.invoke(None, cfg)["log"] == ["fragile", "sibling"]
    assert calls == {"sibling": 1, "fragile": 2}


def test_checkpoints_are_snapshots(saver: ar.BaseCheckpointer) -> None:
    """A node mutating a state value in place must not rewrite earlier checkpoints (langgraph #8748),
    and a partially filled join barrier is saved as it was at that superstep."""

    def grow(state: State) -> dict[str, Any]:
        state["items"].append(str(len(state["items"])))  # in place, on purpose
        return {"items": state["items"], "log": ["grow"]}

    g = ar.StateGraph(State)
    g.add_node("grow", grow)
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("b2", lambda s: {"log": ["b2"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_node("d", lambda s: {"log": ["d"]})
    g.add_edge(ar.START, "grow")
    g.add_conditional_edges("grow", lambda s: "grow" if len(s["items"]) < 3 else "fan", {"grow": "grow", "fan": "b"})
    g.add_edge("b", "c")
    g.add_edge("b", "b2")
    g.add_edge(["b2", "c"], "d")
    app, cfg = g.compile(checkpointer=saver), _cfg()
    app.invoke({"items": [], "log": []}, cfg)
    by_step = {h.metadata["step"]: h for h in app.get_state_history(cfg)}
    assert [by_step[s].values["items"] for s in (1, 2, 3)] == [["0"], ["0", "1"], ["0", "1", "2"]]
    assert [by_step[s].next for s in (3, 4, 5, 6)] == [("b",), ("b2", "c"), ("d",), ()]
    # the saved barrier of step 4 (only b ran) has neither b2 nor c yet; after step 5 it holds both
    assert "join:b2+c:d" not in _channel_values(saver, by_step[4].config)
    assert _channel_values(saver, by_step[5].config)["join:b2+c:d"] == frozenset({"b2", "c"})
    assert app.invoke(None, cfg)["log"] == ["grow", "grow", "grow", "b", "b2", "c", "d"]


def _channel_values(saver: ar.BaseCheckpointer, config: dict[str, Any]) -> dict[str, Any]:
    saved = saver.get_tuple(config)
    assert saved is not None
    return saved.checkpoint.channel_values


def test_durability_exit_saves_only_the_end(saver: ar.BaseCheckpointer) -> None:
    app, cfg = _a_then_b(saver), _cfg()
    app.invoke({"log": []}, cfg, durability="exit")
    history = list(app.get_state_history(cfg))
    assert len(history) == 1 and history[0].values["log"] == ["a", "b"]


def test_durability_exit_keeps_interrupts_resumable(saver: ar.BaseCheckpointer) -> None:
    app, cfg = _interrupting(saver), _cfg()
    app.invoke({"log": []}, cfg, durability="exit")
    assert app.get_state(cfg).next == ("ask",)
    assert app.invoke(ar.Command(resume="7"), cfg, durability="exit")["log"] == ["a", "answer:7", "sibling"]


def test_forking_an_earlier_checkpoint_keeps_the_old_branch(saver: ar.BaseCheckpointer) -> None:
    """Replaying from an earlier checkpoint, or updating its state, starts a new branch: the checkpoints
    of the old branch keep their values (values are stored once per channel version, so the new branch's
    versions must never reuse the old branch's)."""
    app = _a_then_b(saver)
    cfg = _cfg()
    app.invoke({"log": ["x"]}, cfg)
    old_tip = app.get_state(cfg)
    assert old_tip.values["log"] == ["x", "a", "b"]
    after_a = next(h for h in app.get_state_history(cfg) if h.values.get("log") == ["x", "a"])
    replayed = app.invoke({"log": ["y"]}, after_a.config)  # a new input on the old checkpoint: a fork
    assert replayed["log"] == ["x", "a", "y", "a", "b"]
    forked = app.update_state(after_a.config, {"log": ["z"]}, as_node="b")
    assert app.get_state(forked).values["log"] == ["x", "a", "z"]
    assert app.get_state(old_tip.config).values["log"] == ["x", "a", "b"]  # untouched
    assert app.get_state(after_a.config).values["log"] == ["x", "a"]


class Turn(TypedDict):
    items: list[str]


def test_stateful_subgraph_state_on_a_parent_replay(saver: ar.BaseCheckpointer) -> None:
    """compile(checkpointer=True): the subgraph keeps its state across the parent's turns in the parent's
    checkpointer; a replay of the parent's first turn starts it from what it had then (nothing)."""
    seen: list[list[str]] = []

    def step(state: State) -> dict[str, Any]:
        seen.append(list(state["log"]))
        return {"log": ["s"]}

    sub = ar.StateGraph(State)
    sub.add_node("step", step)
    sub.add_edge(ar.START, "step")
    parent = ar.StateGraph(Turn)
    parent.add_node("a", lambda s: {"items": ["a"]})
    parent.add_node("sub", sub.compile(checkpointer=True))
    parent.add_edge(ar.START, "a")
    parent.add_edge("a", "sub")
    app = parent.compile(checkpointer=saver)
    cfg = _cfg()
    app.invoke({"items": []}, cfg)
    app.invoke({"items": []}, cfg)
    assert seen == [[], ["s"]]
    first_turn = [h for h in app.get_state_history(cfg) if h.next == ("sub",)][-1]
    app.invoke(None, first_turn.config)
    assert seen[-1] == []
    # a config without checkpoint_ns lists every namespace of the thread, newest first (as LangGraph's)
    everything = list(saver.list(cfg))
    assert {t.config["configurable"]["checkpoint_ns"] for t in everything} == {"", "sub"}
    assert [t.checkpoint.id for t in everything] == sorted((t.checkpoint.id for t in everything), reverse=True)
    assert len(everything) == len(list(app.get_state_history(cfg))) + len(list(saver.list(sub_config(cfg))))


def sub_config(cfg: dict[str, Any]) -> dict[str, Any]:
    return {"configurable": {**cfg["configurable"], "checkpoint_ns": "sub"}}


def test_a_finished_task_keeps_its_question_on_record(saver: ar.BaseCheckpointer) -> None:
    """Control writes have fixed slots: the answered task's INTERRUPT stays beside its output, so the
    step's record lists both questions while get_state lists only the one still pending."""
    g = ar.StateGraph(State)
    g.add_node("a", lambda s: {"log": [f"a:{ar.interrupt('A')}"]})
    g.add_node("b", lambda s: {"log": [f"b:{ar.interrupt('B')}"]})
    g.add_edge(ar.START, "a")
    g.add_edge(ar.START, "b")
    app = g.compile(checkpointer=saver)
    cfg = _cfg()
    app.invoke({"log": []}, cfg)
    asked = {i.value: i.id for i in app.get_state(cfg).interrupts}
    app.invoke(ar.Command(resume={asked["A"]: "yes"}), cfg)
    live = app.get_state(cfg)
    assert [i.value for i in live.interrupts] == ["B"]
    assert sorted(i.value for i in app.get_state(live.config).interrupts) == ["A", "B"]
    assert sorted(app.invoke(ar.Command(resume={asked["B"]: "ok"}), cfg)["log"]) == ["a:yes", "b:ok"]
