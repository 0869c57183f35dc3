"""The functional API (`@task`, `@entrypoint`), differentially: each program is written once, run on
LangGraph (langgraph.func) and on agent_runtime (agent_runtime.func), and the outputs, streams, saved
state and task call counts must match. Interrupt ids differ between the two (they hash different task
ids), so interrupts are compared by value."""

from __future__ import annotations

import asyncio
import threading
import types
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import agent_runtime as ar
import agent_runtime.func as ar_func

Lib = types.SimpleNamespace


def _langgraph() -> Lib:
    import langgraph.func as lg_func
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, Interrupt, RetryPolicy, interrupt

    return Lib(
        name="langgraph",
        entrypoint=lg_func.entrypoint,
        task=lg_func.task,
        Saver=InMemorySaver,
        Command=Command,
        Interrupt=Interrupt,
        RetryPolicy=RetryPolicy,
        interrupt=interrupt,
    )


def _ours() -> Lib:
    return Lib(
        name="agent_runtime",
        entrypoint=ar_func.entrypoint,
        task=ar_func.task,
        Saver=ar.InMemoryCheckpointer,
        Command=ar.Command,
        Interrupt=ar.Interrupt,
        RetryPolicy=ar.RetryPolicy,
        interrupt=ar.interrupt,
    )


LIBS = [_langgraph(), _ours()]
LG, OURS = LIBS


def _plain(value: Any) -> Any:
    """Interrupts as ("interrupt", value), recursively: their ids differ between the libraries."""
    if isinstance(value, LG.Interrupt | OURS.Interrupt):
        return ("interrupt", _plain(value.value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    return value


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _both(program: Callable[[Lib], Any]) -> Any:
    """Run `program` on both libraries; their (normalised) results must be equal. Returns ours."""
    expected, got = (_plain(program(lib)) for lib in LIBS)
    assert got == expected
    return got


def _state(app: Any, cfg: dict[str, Any]) -> tuple[Any, tuple[str, ...], Any]:
    snapshot = app.get_state(cfg)
    return snapshot.values, snapshot.next, [i.value for i in snapshot.interrupts]


# -- tasks -----------------------------------------------------------------------------------------------
def test_sync_tasks_return_futures_and_parallel_calls_run_concurrently() -> None:
    def program(lib: Lib) -> Any:
        # The first run's three calls meet at a barrier: run one after another, they would break it.
        rendezvous = threading.Barrier(3, timeout=10)

        @lib.task
        def slow_double(x: int) -> int:
            if x <= 3:
                rendezvous.wait()
            return 2 * x

        @lib.task(name="plus_one")
        def add(x: int) -> int:
            return x + 1

        @lib.entrypoint()
        def workflow(numbers: list[int]) -> list[int]:
            futures = [slow_double(n) for n in numbers]
            return [add(f.result()).result() for f in futures]

        out = workflow.invoke([1, 2, 3])
        updates = list(workflow.stream([4], stream_mode="updates"))
        return out, updates

    assert _both(program) == ([3, 5, 7], [{"slow_double": 8}, {"plus_one": 9}, {"workflow": [9]}])


def test_async_tasks_are_awaitable_and_gathered_concurrently() -> None:
    def program(lib: Lib) -> Any:
        rendezvous: list[asyncio.Barrier] = []  # made inside the run's event loop

        @lib.task
        async def fetch(x: int) -> int:
            if x <= 3:  # the first run's three calls meet here; awaited one by one they would time out
                await asyncio.wait_for(rendezvous[0].wait(), timeout=10)
            return x * 10

        @lib.task
        def sync_step(x: int) -> int:  # a sync task called from an async entrypoint
            return x + 1

        @lib.entrypoint()
        async def workflow(numbers: list[int]) -> list[int]:
            gathered = await asyncio.gather(*[fetch(n) for n in numbers])
            return [await sync_step(v) for v in gathered]

        async def main() -> Any:
            rendezvous.append(asyncio.Barrier(3))
            out = await workflow.ainvoke([1, 2, 3])
            events = [e async for e in workflow.astream([5], stream_mode=["updates", "values"])]
            return out, events

        return asyncio.run(main())

    out, events = _both(program)
    assert out == [11, 21, 31]
    assert events == [
        ("updates", {"fetch": 50}),
        ("updates", {"sync_step": 51}),
        ("updates", {"workflow": [51]}),
        ("values", [51]),
    ]


def test_async_task_from_sync_entrypoint_and_task_outside_a_run_are_errors() -> None:
    def program(lib: Lib) -> Any:
        @lib.task
        async def fetch(x: int) -> int:
            return x

        @lib.entrypoint()
        def workflow(x: int) -> int:
            return fetch(x).result()  # type: ignore[no-any-return]

        with pytest.raises(RuntimeError) as inside:
            workflow.invoke(1)
        with pytest.raises(RuntimeError):
            fetch(1)
        return str(inside.value)

    assert _both(program) == "In an sync context async tasks cannot be called"


def test_task_failure_reaches_the_caller_which_may_handle_it() -> None:
    def program(lib: Lib) -> Any:
        @lib.task
        def lookup(key: str) -> str:
            raise KeyError(key)

        @lib.entrypoint()
        def handled(key: str) -> str:
            try:
                return lookup(key).result()  # type: ignore[no-any-return]
            except KeyError as exc:
                return f"missing {exc}"

        @lib.entrypoint()
        def unhandled(key: str) -> str:
            return lookup(key).result()  # type: ignore[no-any-return]

        with pytest.raises(KeyError):
            unhandled.invoke("b")
        return handled.invoke("a")

    assert _both(program) == "missing 'a'"


def test_retry_policy_reruns_a_failing_task() -> None:
    def program(lib: Lib) -> Any:
        attempts = {"flaky": 0, "broken": 0}
        policy = lib.RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False, retry_on=ConnectionError)

        @lib.task(retry_policy=policy)
        def flaky(x: int) -> int:
            attempts["flaky"] += 1
            if attempts["flaky"] < 3:
                raise ConnectionError("try again")
            return x

        @lib.task(retry_policy=[policy])
        def broken(x: int) -> int:
            attempts["broken"] += 1
            raise ConnectionError("down")

        @lib.entrypoint()
        def ok(x: int) -> int:
            return flaky(x).result()  # type: ignore[no-any-return]

        @lib.entrypoint()
        def failing(x: int) -> int:
            return broken(x).result()  # type: ignore[no-any-return]

        out = ok.invoke(7)
        with pytest.raises(ConnectionError):
            failing.invoke(1)
        return out, attempts

    assert _both(program) == (7, {"flaky": 3, "broken": 3})


# -- entrypoint: previous, final, config -----------------------------------------------------------------
def test_previous_is_the_last_return_value_of_the_thread() -> None:
    def program(lib: Lib) -> Any:
        @lib.entrypoint(checkpointer=lib.Saver())
        def counter(step: int, *, previous: Any = None) -> int:
            return (previous or 0) + step

        @lib.entrypoint()
        def no_checkpointer(x: int, previous: Any) -> Any:
            return previous

        cfg, other = _cfg(), _cfg()
        outs = [counter.invoke(1, cfg), counter.invoke(2, cfg), counter.invoke(10, other), counter.invoke(3, cfg)]
        return outs, _state(counter, cfg), _state(counter, other), no_checkpointer.invoke(1)

    outs, state, other, unsaved = _both(program)
    assert outs == [1, 3, 10, 6]
    assert state == (6, (), [])
    assert other == (10, (), [])
    assert unsaved is None


def test_entrypoint_final_returns_one_value_and_saves_another() -> None:
    def program(lib: Lib) -> Any:
        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(number: int, *, previous: Any = None) -> Any:
            return lib.entrypoint.final(value=previous, save=2 * number)

        cfg = _cfg()
        outs = [workflow.invoke(3, cfg), workflow.invoke(1, cfg)]
        updates = list(workflow.stream(5, cfg))
        values = list(workflow.stream(6, cfg, stream_mode="values"))
        return outs, updates, values, _state(workflow, cfg)

    assert _both(program) == ([None, 6], [{"workflow": 2}], [10], (10, (), []))


def test_config_is_injected_with_the_run_metadata() -> None:
    def program(lib: Lib) -> Any:
        @lib.entrypoint()
        def workflow(x: int, config) -> Any:  # type: ignore[no-untyped-def]  # LangGraph injects an untyped `config`
            meta = config["metadata"]
            return x, config["configurable"]["user"], meta["langgraph_step"], meta["langgraph_node"]

        return workflow.invoke(1, {"configurable": {"user": "ann"}})

    assert _both(program) == (1, "ann", 0, "workflow")


def test_entrypoint_signature_errors() -> None:
    def program(lib: Lib) -> Any:
        def no_params() -> None: ...

        def gen(x: int) -> Any:
            yield x

        with pytest.raises(ValueError):
            lib.entrypoint()(no_params)
        with pytest.raises(NotImplementedError):
            lib.entrypoint()(gen)
        return True

    _both(program)


# -- interrupt and resume --------------------------------------------------------------------------------
def test_resume_after_interrupt_does_not_rerun_finished_tasks() -> None:
    def program(lib: Lib) -> Any:
        calls: dict[str, int] = {"write": 0, "polish": 0}

        @lib.task
        def write(topic: str) -> str:
            calls["write"] += 1
            return f"essay about {topic}"

        @lib.task
        def polish(text: str) -> str:
            calls["polish"] += 1
            return text.upper()

        @lib.entrypoint(checkpointer=lib.Saver())
        def review(topic: str) -> dict[str, str]:
            first, second = write(topic), write(topic + "s")
            essay = first.result() + " / " + second.result()
            verdict = lib.interrupt({"essay": essay})
            return {"essay": polish(essay).result(), "verdict": verdict}

        cfg = _cfg()
        paused = review.invoke("cat", cfg)
        state = _state(review, cfg)
        counts = dict(calls)
        resumed = list(review.stream(lib.Command(resume="good"), cfg, stream_mode=["updates", "values"]))
        return paused, state, counts, resumed, calls, _state(review, cfg)

    paused, state, counts, resumed, calls, final = _both(program)
    assert paused == {"__interrupt__": [("interrupt", {"essay": "essay about cat / essay about cats"})]}
    assert state == (None, ("review",), [{"essay": "essay about cat / essay about cats"}])
    assert counts == {"write": 2, "polish": 0}
    result = {"essay": "ESSAY ABOUT CAT / ESSAY ABOUT CATS", "verdict": "good"}
    assert resumed == [
        ("values", None),
        ("updates", {"polish": "ESSAY ABOUT CAT / ESSAY ABOUT CATS"}),
        ("updates", {"review": result}),
        ("values", result),
    ]
    assert calls == {"write": 2, "polish": 1}  # the two finished `write` calls were not run again
    assert final == (result, (), [])


def test_interrupt_inside_a_task_and_a_new_input_on_a_paused_thread() -> None:
    def program(lib: Lib) -> Any:
        calls: list[tuple[str, int]] = []

        @lib.task
        def ask(x: int) -> Any:
            calls.append(("ask", x))
            return lib.interrupt(f"value for {x}?")

        @lib.task(name="dbl")
        def double(x: int) -> int:
            calls.append(("dbl", x))
            return x * 2

        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(x: int) -> int:
            answer = ask(double(x).result()).result()
            return double(answer).result()  # type: ignore[no-any-return]

        cfg = _cfg()
        first = list(workflow.stream(3, cfg, stream_mode=["updates", "values"]))
        resumed = list(workflow.stream(lib.Command(resume=10), cfg, stream_mode=["updates", "values"]))
        paused_again = workflow.invoke(4, cfg)
        abandoned = workflow.invoke(5, cfg)  # a new input replaces the paused run
        return first, resumed, paused_again, abandoned, _state(workflow, cfg), calls

    first, resumed, paused_again, abandoned, state, calls = _both(program)
    assert first == [
        ("updates", {"dbl": 6}),
        ("updates", {"__interrupt__": (("interrupt", "value for 6?"),)}),
        ("values", {"__interrupt__": (("interrupt", "value for 6?"),)}),
    ]
    assert resumed == [
        ("values", None),
        ("updates", {"ask": 10}),
        ("updates", {"dbl": 20}),
        ("updates", {"workflow": 20}),
        ("values", 20),
    ]
    assert paused_again == {"__interrupt__": [("interrupt", "value for 8?")]}
    assert abandoned == {"__interrupt__": [("interrupt", "value for 10?")]}
    assert state == (20, ("workflow",), ["value for 10?"])
    assert calls[:4] == [("dbl", 3), ("ask", 6), ("ask", 6), ("dbl", 10)]


def test_a_dict_return_value_is_merged_with_the_interrupts_of_the_next_run() -> None:
    def program(lib: Lib) -> Any:
        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(x: int) -> dict[str, Any]:
            return {"x": x, "answer": lib.interrupt("answer?")}

        cfg = _cfg()
        workflow.invoke(1, cfg)
        done = workflow.invoke(lib.Command(resume="a"), cfg)
        paused = workflow.invoke(2, cfg)
        values = list(workflow.stream(3, cfg, stream_mode="values"))
        return done, paused, values

    done, paused, values = _both(program)
    assert done == {"x": 1, "answer": "a"}
    assert paused == {"x": 1, "answer": "a", "__interrupt__": [("interrupt", "answer?")]}
    assert values == [{"x": 1, "answer": "a", "__interrupt__": (("interrupt", "answer?"),)}]


def test_parallel_interrupting_tasks_are_answered_one_at_a_time_by_id() -> None:
    def program(lib: Lib) -> Any:
        @lib.task
        def ask(x: int) -> Any:
            return lib.interrupt(f"ask {x}")

        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(xs: list[int]) -> list[Any]:
            futures = [ask(x) for x in xs]
            return [f.result() for f in futures]

        cfg = _cfg()
        outputs = [workflow.invoke([1, 2], cfg)]
        with pytest.raises(RuntimeError, match="multiple pending interrupts"):
            workflow.invoke(lib.Command(resume="A"), cfg)
        for answer in ("A", "B"):
            (pending,) = outputs[-1]["__interrupt__"]
            outputs.append(workflow.invoke(lib.Command(resume={pending.id: answer}), cfg))
        return outputs

    assert _both(program) == [
        {"__interrupt__": [("interrupt", "ask 1")]},
        {"__interrupt__": [("interrupt", "ask 2")]},
        ["A", "B"],
    ]


def test_durability_exit_keeps_the_finished_calls_for_the_resume() -> None:
    def program(lib: Lib) -> Any:
        calls = {"n": 0}

        @lib.task
        def work(x: int) -> int:
            calls["n"] += 1
            return x + 1

        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(x: int) -> Any:
            return work(x).result(), lib.interrupt("go?")

        cfg = _cfg()
        workflow.invoke(1, cfg, durability="exit")
        return workflow.invoke(lib.Command(resume="yes"), cfg, durability="exit"), calls

    assert _both(program) == ((2, "yes"), {"n": 1})


def test_update_state_and_history() -> None:
    def program(lib: Lib) -> Any:
        @lib.entrypoint(checkpointer=lib.Saver())
        def workflow(x: int, previous: Any = None) -> list[Any]:
            return [x, previous]

        cfg = _cfg()
        workflow.invoke(1, cfg)
        workflow.update_state(cfg, 42)
        out = workflow.invoke(2, cfg)
        history = [
            (h.metadata["step"], h.metadata["source"], h.values, h.next) for h in workflow.get_state_history(cfg)
        ]
        return out, history

    out, history = _both(program)
    assert out == [2, 42]
    assert history[0] == (3, "loop", [2, 42], ())
    assert history[-1] == (-1, "input", None, ("workflow",))


def test_task_called_from_a_state_graph_node() -> None:
    from typing import TypedDict

    class State(TypedDict):
        n: int

    def program(lib: Lib, graph: Any) -> Any:
        calls = {"n": 0}

        @lib.task
        def square(x: int) -> int:
            calls["n"] += 1
            return x * x

        def node(state: State) -> dict[str, int]:
            value = square(state["n"]).result()
            lib.interrupt("continue?")
            return {"n": value}

        builder = graph.StateGraph(State)
        builder.add_node("node", node)
        builder.add_edge(graph.START, "node")
        app = builder.compile(checkpointer=lib.Saver())
        cfg = _cfg()
        app.invoke({"n": 3}, cfg)
        return app.invoke(lib.Command(resume=True), cfg), calls

    import langgraph.graph as lg_graph

    expected = _plain(program(LG, lg_graph))
    assert _plain(program(OURS, ar)) == expected == ({"n": 9}, {"n": 1})


# -- guard rails (our extension: LangGraph has none) -----------------------------------------------------
def _polling_workflow(rails: ar.GuardRails, calls: list[int]) -> Any:
    @ar_func.task
    def poll(job: int) -> str:
        calls.append(job)
        return "pending"

    @ar_func.entrypoint(checkpointer=ar.InMemoryCheckpointer(), guard_rails=rails)
    def wait_for_job(job: int) -> str:
        while poll(job).result() == "pending":  # never ends on its own
            pass
        return "done"

    return wait_for_job


def test_guard_rails_stop_a_looping_entrypoint() -> None:
    calls: list[int] = []
    workflow = _polling_workflow(ar.GuardRails(), calls)
    cfg = _cfg()
    assert workflow.invoke(7, cfg) is None
    report = workflow.last_run_report
    assert report.stop_reason is ar.StopReason.LOOP
    assert [e.action for e in report.guard_events] == ["nudge", "stop"]
    assert report.guard_events[-1].detector == "identical_calls"
    assert len(calls) == 5  # stopped at the call after the detection
    assert workflow.get_state(cfg).next == ("wait_for_job",)  # nothing applied: the run can be resumed


def test_guard_rails_max_steps_counts_task_calls() -> None:
    calls: list[int] = []
    workflow = _polling_workflow(ar.GuardRails(max_steps=3, loop_detection=False), calls)
    workflow.invoke(1, _cfg())
    assert workflow.last_run_report.stop_reason is ar.StopReason.MAX_STEPS
    assert len(calls) == 3


def test_guard_rails_let_a_finite_entrypoint_finish() -> None:
    @ar_func.task
    def inc(x: int) -> int:
        return x + 1

    @ar_func.entrypoint(guard_rails=ar.GuardRails(max_steps=20))
    def count(n: int) -> int:
        value = 0
        for _ in range(n):
            value = inc(value).result()
        return value

    assert count.invoke(10) == 10
    assert count.last_run_report.stop_reason is ar.StopReason.GOAL


def test_exported_from_the_package() -> None:
    assert ar.entrypoint is ar_func.entrypoint
    assert ar.task is ar_func.task
