"""Resuming a step (after an interrupt or a crash) from the writes its tasks saved: a task that
finished keeps its writes and does not run again; an interrupted one gets its answers so far and runs
again; a failed one runs again, unless its error handler took over (then the handler runs again,
unless it finished)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_runtime.engine.algo import Task
from agent_runtime.engine.error_handlers import handler_task
from agent_runtime.engine.task_status import restore_task

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

SavedWrites = dict[str, list[tuple[str, Any]]]  # task id -> its saved (channel, value) writes


def restore_step(
    run: RunView, tasks: list[Task], pending: Sequence[tuple[str, str, Any]], handlers: bool = True
) -> SavedWrites:
    """Restore the step's `tasks` from the `pending` writes of its checkpoint (with `handlers`, the
    error handlers of failed tasks join `tasks`); the saved writes by task id, where the step's task
    calls find theirs."""
    by_task: SavedWrites = {}
    for task_id, chan, value in pending:
        by_task.setdefault(task_id, []).append((chan, value))
    for task in list(tasks):
        saved = by_task.get(task.id)
        if saved:
            restore_task(task, saved)
        if handlers and task.done and task.error is not None:
            handler = handler_task(run, task, task.error)
            if handler is not None:
                if handler.id in by_task:
                    restore_task(handler, by_task[handler.id])
                tasks.append(handler)
    return by_task
