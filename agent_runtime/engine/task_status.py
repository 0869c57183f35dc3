"""What the pending writes saved for a superstep say about each of its tasks (LangGraph's
`read_task_statuses`): the one place that reads them as task status.

Control writes say what happened to a task: INTERRUPT (the questions it asked last), RESUME (the
answers it got so far), ERROR. Any other write is output (channel writes, RETURN, NO_WRITES), and a
task is finished if and only if it has some. A finished task keeps its INTERRUPT record (history shows
where a question was asked), but only an unfinished task's interrupts wait for an answer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_runtime.checkpoint.base import NULL_TASK_ID
from agent_runtime.constants import ERROR, ERROR_SOURCE, INTERRUPT, NO_WRITES, RESUME
from agent_runtime.core.types import Interrupt
from agent_runtime.errors import SavedError

if TYPE_CHECKING:
    from agent_runtime.engine.algo import Task

CONTROL_WRITES = frozenset({ERROR, INTERRUPT, RESUME})
_NOT_REAPPLIED = frozenset({NO_WRITES, INTERRUPT, ERROR, ERROR_SOURCE})  # saved, not a restored task's writes


@dataclass(frozen=True, slots=True)
class TaskStatus:
    output: tuple[tuple[str, Any], ...] = ()  # in saved order; empty while the task has not finished
    interrupts: tuple[Interrupt, ...] = ()  # the questions it asked last, answered or not
    error: Any = None

    @property
    def finished(self) -> bool:
        return bool(self.output)

    @property
    def pending_interrupts(self) -> tuple[Interrupt, ...]:
        """The questions still waiting for an answer: none once the task finished."""
        return () if self.finished else self.interrupts


def read_task_statuses(pending_writes: Iterable[tuple[str, str, Any]]) -> dict[str, TaskStatus]:
    """The status of each task with saved writes, by task id (NULL_TASK_ID's writes are input, not a task)."""
    output: dict[str, list[tuple[str, Any]]] = {}
    interrupts: dict[str, list[Interrupt]] = {}
    errors: dict[str, Any] = {}
    for task_id, channel, value in pending_writes:
        if task_id == NULL_TASK_ID:
            continue
        output.setdefault(task_id, [])
        if channel == INTERRUPT:
            interrupts.setdefault(task_id, []).extend(value if isinstance(value, Sequence) else [value])
        elif channel == ERROR:
            errors.setdefault(task_id, value)
        elif channel not in CONTROL_WRITES:
            output[task_id].append((channel, value))
    return {
        task_id: TaskStatus(tuple(writes), tuple(interrupts.get(task_id, ())), errors.get(task_id))
        for task_id, writes in output.items()
    }


def pending_interrupts(pending_writes: Iterable[tuple[str, str, Any]]) -> list[Interrupt]:
    """The interrupts of a step still waiting for an answer."""
    return [i for status in read_task_statuses(pending_writes).values() for i in status.pending_interrupts]


def restore_task(task: Task, saved: Sequence[tuple[str, Any]]) -> None:
    """Give a task (or a task call) of a resumed step what it saved: its answered interrupts, and its
    writes when it had finished (it saved output writes; otherwise it runs again). A failure its error
    handler took over stays done with its error (the handler, not the task, runs again)."""
    channels = {c for c, _ in saved}
    for chan, value in saved:
        if chan == RESUME:
            task.resume = list(value)
        elif chan == ERROR and ERROR_SOURCE in channels:
            task.error = SavedError(value)
            task.done = True
            return
    if all(c in CONTROL_WRITES for c, _ in saved):
        return
    task.writes = [(c, v) for c, v in saved if c not in _NOT_REAPPLIED]
    task.done = True
