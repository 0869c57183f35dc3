"""Stream events shaped and ordered as LangGraph's: a task's "updates" (and "tasks" / "debug" task_result)
as it finishes, the interrupts as they are raised, "checkpoints" / "debug" checkpoint events with the
next tasks. An event is (namespace, mode, payload): the namespace is () for the graph streamed and
("<node>:<task id>", ...) for a subgraph's events (`subgraphs=True`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from agent_runtime.checkpoint.base import CheckpointTuple, checkpoint_config, now_iso
from agent_runtime.constants import ERROR, INTERRUPT, PUSH_TRIGGER, RETURN
from agent_runtime.engine.algo import Task, apply_writes, prepare_tasks, sort_tasks
from agent_runtime.engine.callbacks import CALLBACK_MODES
from agent_runtime.engine.payloads import task_payload, task_result, user_metadata
from agent_runtime.engine.subgraphs import subgraph_state, with_checkpoint_map

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

CACHED = {"cached": True}  # marks the update of a task restored from the saved writes on a resume
# the stream mode of each kind of "debug" event: "debug" wraps the payloads of "checkpoints" and "tasks"
MODE_OF = {"checkpoint": "checkpoints", "task": "tasks", "task_result": "tasks"}
TASK_MODES = frozenset({"tasks", "debug"})
CHECKPOINT_MODES = frozenset({"checkpoints", "debug"})
REPORT_MODE = "report"  # ours: the run's diagnostics as they happen, and its RunReport last
STREAM_MODES = frozenset({"values", "updates", "debug", "custom", "checkpoints", "tasks", REPORT_MODE, *CALLBACK_MODES})


def debug(run: RunView, kind: str, step: int, payload: Any) -> None:
    """A "checkpoint", "task" or "task_result" payload on its own stream mode and, wrapped, on "debug"
    (as LangGraph); our own kinds ("diagnostic", "run_report"), wrapped the same way, on our own
    "report" mode only (LangGraph's "debug" has no such events)."""
    mode = MODE_OF.get(kind)
    if mode is None:
        wrapped_mode = REPORT_MODE
    else:
        wrapped_mode = "debug"
        if mode in run.modes:
            run.events.append((run.stream_ns, mode, payload))
    if wrapped_mode in run.modes:
        wrapped = {"step": step, "timestamp": now_iso(), "type": kind, "payload": payload}
        run.events.append((run.stream_ns, wrapped_mode, wrapped))


def with_interrupts(output: Any, interrupts: Any) -> dict[str, Any]:
    """An interrupted run's output, as LangGraph shapes it: the interrupts added to a dict output,
    or alone when the output is not a dict (an entrypoint's return value)."""
    return {**output, INTERRUPT: interrupts} if isinstance(output, dict) else {INTERRUPT: interrupts}


def tasks_started(run: RunView, tasks: list[Task]) -> None:
    """The "task" events of a step's tasks, before they run."""
    metadata = user_metadata(run.config)
    for task in tasks:
        if not task.hidden:
            shown = run.shown_input(run.task_input(task))
            run._debug("task", task_payload(task.id, task.name, shown, task.triggers, metadata))


def call_started(run: RunView, call: Task) -> None:
    """The "task" event of a task call (functional API), also of one restored on a resume (as LangGraph)."""
    payload = task_payload(call.id, call.name, call.input, (PUSH_TRIGGER,), user_metadata(run.config))
    with run.events_lock:  # (from a pool thread too)
        run._debug("task", payload)


def call_finished(run: RunView, call: Task, result: Any) -> None:
    """The "task_result" event of a task call that ran: its return value, or its error."""
    payload: dict[str, Any] = {
        "id": call.id,
        "name": call.name,
        "error": call.error,
        "result": {} if call.error is not None else {RETURN: result},
        "interrupts": [],
    }
    with run.events_lock:
        run._debug("task_result", payload)


def task_finished(run: RunView, task: Task) -> None:
    """A task finished, paused or failed: its events, at once (LangGraph streams them as tasks end)."""
    if task.hidden:
        return
    interrupts = task.interrupts
    if interrupts:
        run._emit("updates", {INTERRUPT: interrupts})
        run._emit("values", with_interrupts(run.output(), interrupts))
    elif task.done and "updates" in run.modes:
        update = {task.name: run.task_update(task, run.spec.schema.keys)}
        run._emit("updates", {**update, "__metadata__": {"cached": True}} if task.cached else update)
    if run.task_events:
        run._debug("task_result", _task_result_payload(run, task))


def _task_result_payload(run: RunView, task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "name": task.name,
        "error": task.error,
        "result": task_result(task.writes, run.result_keys) if task.done else {},
        "interrupts": [asdict(i) for i in task.interrupts or ()],
    }


def tasks_restored(run: RunView, tasks: list[Task]) -> None:
    """On a resume, the updates of the tasks that had finished are shown again, marked as cached."""
    if "updates" not in run.modes:
        return
    keys = run.spec.schema.keys
    for task in tasks:
        if task.done and not task.hidden and task.error is None:
            run._emit("updates", {task.name: run.task_update(task, keys), "__metadata__": CACHED})


def checkpoint_saved(run: RunView, metadata: dict[str, Any], parent: dict[str, Any]) -> None:
    """The "debug" checkpoint event of a checkpoint just saved: its state and the tasks it runs next."""
    tasks = prepare_tasks(run.spec, run.state, run.step + 1, run.checkpoint_id, run.updated)
    _checkpoint_event(run, metadata, parent["configurable"].get("checkpoint_id"), [_next_task(run, t) for t in tasks])


def checkpoint_loaded(run: RunView, saved: CheckpointTuple) -> None:
    """A resumed run starts with the event of the checkpoint it resumes, with what its tasks saved
    (LangGraph streams the checkpoint at the start of every step)."""
    by_task: dict[str, dict[str, Any]] = {}
    for task_id, chan, value in saved.pending_writes or ():
        if chan == INTERRUPT:
            by_task.setdefault(task_id, {})["interrupts"] = tuple(asdict(i) for i in value)
        elif chan == ERROR:
            by_task.setdefault(task_id, {})["error"] = value
    tasks = prepare_tasks(run.spec, run.state, run.step, run.checkpoint_id, None)
    entries = [{**_next_task(run, t), **by_task.get(t.id, {})} for t in tasks]
    parent = saved.parent_config
    _checkpoint_event(run, saved.metadata, parent["configurable"]["checkpoint_id"] if parent else None, entries)


def _next_task(run: RunView, task: Task) -> dict[str, Any]:
    return {"id": task.id, "name": task.name, "interrupts": (), "state": subgraph_state(run.config, task)}


def _checkpoint_event(
    run: RunView, metadata: dict[str, Any], parent_id: str | None, tasks: list[dict[str, Any]]
) -> None:
    config = checkpoint_config(run.thread_id, run.ns, run.checkpoint_id)
    parent = checkpoint_config(run.thread_id, run.ns, parent_id) if parent_id else None
    payload = {
        "config": with_checkpoint_map(config, metadata),
        "parent_config": parent and with_checkpoint_map(parent, metadata),
        "values": run.output(),
        "metadata": metadata,
        "next": [t["name"] for t in tasks],
        "tasks": tasks,
    }
    debug(run, "checkpoint", metadata["step"], payload)


def paused(run: RunView) -> None:
    """The end of a paused run, as LangGraph's: after an interrupt, the state with the finished
    siblings' writes applied (not saved); a pause without interrupts (a breakpoint) reported last.
    A subgraph's pause is reported by the graph streamed (the root), as LangGraph does."""
    if run.nested:
        return
    if (
        run.status == "interrupted"
        and any(t.writes for t in run._tasks)
        and not apply_writes(run.spec, run.state, sort_tasks(run._tasks)).isdisjoint(run.spec.schema.keys)
    ):
        run._view = None
        run._emit("values", run.output())
    if not run.interrupts:
        run._emit("updates", {INTERRUPT: ()})
