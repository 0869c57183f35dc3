"""Guard rails: clean step limits, grace step, budgets, loop detection, Terminate, typed stop reasons."""

from __future__ import annotations

import asyncio
import operator
import time
import uuid
from typing import Annotated, Any, TypedDict

import pytest

import agent_runtime as ar


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    n: int
    x: str


def _loop(node: Any, **compile_kwargs: Any) -> ar.CompiledGraph:
    g = ar.StateGraph(State)
    g.add_node("work", node)
    g.add_edge(ar.START, "work")
    g.add_edge("work", "work")
    return g.compile(**compile_kwargs)


def _report(app: ar.CompiledGraph) -> ar.RunReport:
    assert app.last_run_report is not None
    return app.last_run_report


def test_max_steps_stops_cleanly_and_saves_the_last_step() -> None:
    app = _loop(lambda s: {"n": s["n"] + 1}, checkpointer=ar.InMemoryCheckpointer())
    cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
    out = app.invoke({"n": 0}, cfg, guard_rails=ar.GuardRails(max_steps=5))
    assert out["n"] == 5
    report = _report(app)
    assert report.stop_reason is ar.StopReason.MAX_STEPS
    assert [names for _, names in report.steps] == [("work",)] * 5
    assert app.get_state(cfg).values["n"] == 5
    with pytest.raises(ar.GraphRecursionError):
        app.invoke({"n": 0}, {**cfg, "recursion_limit": 5})


def test_grace_step_may_only_finish() -> None:
    def work(state: State) -> dict[str, Any]:
        if ar.in_grace_step():
            return {"log": ["final answer"]}
        return {"log": [f"step{len(state['log'])}"]}

    app = _loop(work, guard_rails=ar.GuardRails(max_steps=3, grace_step=True))
    assert app.invoke({"log": []})["log"] == ["step0", "step1", "step2", "final answer"]
    report = _report(app)
    assert report.stop_reason is ar.StopReason.MAX_STEPS
    assert [e.action for e in report.guard_events] == ["grace", "stop"]


def test_wall_time_budget() -> None:
    def slow(state: State) -> dict[str, Any]:
        time.sleep(0.03)
        return {"n": state["n"] + 1}

    app = _loop(slow, guard_rails=ar.GuardRails(max_wall_time_s=0.1))
    out = app.invoke({"n": 0})
    assert _report(app).stop_reason is ar.StopReason.TIMEOUT
    assert 1 <= out["n"] <= 5  # ~3 on a quiet machine


def test_token_budget() -> None:
    def spend(state: State) -> dict[str, Any]:
        ar.report_usage(tokens=100, cost=0.01)
        return {"n": state["n"] + 1}

    app = _loop(spend, guard_rails=ar.GuardRails(max_tokens=250))
    assert app.invoke({"n": 0})["n"] == 3
    report = _report(app)
    assert report.stop_reason is ar.StopReason.BUDGET and report.tokens == 300
    assert report.cost == pytest.approx(0.03)


def test_consecutive_errors() -> None:
    def failing_tool(state: State) -> dict[str, Any]:
        ar.record_action("bash", {"cmd": f"try {state['n']}"}, "Error: no such file", error=True)
        return {"n": state["n"] + 1}

    app = _loop(failing_tool, guard_rails=ar.GuardRails(max_consecutive_errors=3, loop_detection=False))
    assert app.invoke({"n": 0})["n"] == 3
    assert _report(app).stop_reason is ar.StopReason.ERROR


def test_no_progress_loop_is_nudged_then_stopped() -> None:
    nudges: list[str] = []

    def stuck(state: State) -> dict[str, Any]:
        nudge = ar.pending_nudge()
        if nudge:
            nudges.append(nudge)
        return {"x": "same"}

    app = _loop(stuck, guard_rails=ar.GuardRails())
    app.invoke({"x": "same"})
    report = _report(app)
    assert report.stop_reason is ar.StopReason.LOOP
    assert [e.action for e in report.guard_events] == ["nudge", "stop"]
    assert len(nudges) == 1 and "loop" in nudges[0].lower()
    assert len(report.steps) <= 6  # detected within a few repeated steps


def test_progress_is_not_a_loop() -> None:
    g = ar.StateGraph(State)
    g.add_node("inc", lambda s: {"n": s["n"] + 1, "log": ["tick"]})
    g.add_edge(ar.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 60 else ar.END, ["inc", ar.END])
    app = g.compile(guard_rails=ar.GuardRails())
    assert app.invoke({"n": 0, "log": []})["n"] == 60
    assert _report(app).stop_reason is ar.StopReason.GOAL and _report(app).guard_events == []


def test_polling_with_changing_results_continues_identical_results_stop() -> None:
    def poll(results: list[str]) -> Any:
        def node(state: State) -> dict[str, Any]:
            i = state["n"]
            ar.record_action("build_status", {"id": 7}, results[min(i, len(results) - 1)])
            return {"n": i + 1}

        return node

    changing = [f"running {i}%" for i in range(0, 100, 10)]
    g = ar.StateGraph(State)
    g.add_node("poll", poll(changing))
    g.add_edge(ar.START, "poll")
    g.add_conditional_edges("poll", lambda s: "poll" if s["n"] < 10 else ar.END, ["poll", ar.END])
    app = g.compile(guard_rails=ar.GuardRails())
    assert app.invoke({"n": 0})["n"] == 10
    assert _report(app).stop_reason is ar.StopReason.GOAL
    stuck = _loop(poll(["running 50%"]), guard_rails=ar.GuardRails())
    stuck.invoke({"n": 0})
    assert _report(stuck).stop_reason is ar.StopReason.LOOP


@pytest.mark.parametrize("status", [ar.StopReason.GOAL, ar.StopReason.ABORTED])
def test_terminate(status: ar.StopReason) -> None:
    def work(state: State) -> Any:
        if state["n"] == 2:
            return ar.Terminate(status, update={"log": ["done"]}, message="finished")
        return {"n": state["n"] + 1}

    app = _loop(work)
    assert app.invoke({"n": 0, "log": []}) == {"n": 2, "log": ["done"]}  # the update is applied
    report = _report(app)
    assert report.stop_reason is status and report.message == "finished"


def test_stop_reasons_interrupted_error_aborted() -> None:
    g = ar.StateGraph(State)
    g.add_node("ask", lambda s: {"x": ar.interrupt("?")})
    g.add_edge(ar.START, "ask")
    app = g.compile(checkpointer=ar.InMemoryCheckpointer())
    app.invoke({"x": ""}, {"configurable": {"thread_id": uuid.uuid4().hex}})
    assert _report(app).stop_reason is ar.StopReason.INTERRUPTED

    broken = _loop(lambda s: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        broken.invoke({"n": 0})
    assert _report(broken).stop_reason is ar.StopReason.ERROR

    async def slow(state: State) -> dict[str, Any]:
        await asyncio.sleep(10)
        return {}

    hanging = _loop(slow)

    async def cancel() -> None:
        task = asyncio.ensure_future(hanging.ainvoke({"n": 0}))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    assert _report(hanging).stop_reason is ar.StopReason.ABORTED
