"""What engine/loop.py's Run saves through a checkpointer's public methods (`put`, `put_writes`): the
checkpoint of a superstep, for a checkpointer without a direct path (`thread_store`), and the writes
of a finished task that ended otherwise than with plain output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.channels.untracked import SendQueue
from agent_runtime.checkpoint.base import BaseCheckpointer, Checkpoint
from agent_runtime.constants import ERROR, ERROR_SOURCE, INTERRUPT, NO_WRITES, RESUME
from agent_runtime.engine.task_status import CONTROL_WRITES

if TYPE_CHECKING:
    from agent_runtime.engine.algo import ChannelState, Task


def put_checkpoint(
    checkpointer: BaseCheckpointer,
    parent: dict[str, Any],
    checkpoint_id: str,
    ts: float,
    state: ChannelState,
    saved_max: int,
    updated: set[str] | None,
    metadata: dict[str, Any],
) -> None:
    """`put` of the state as checkpoint `checkpoint_id`, the child of the one `parent` names; channels
    with a version above `saved_max` (the highest the last saved checkpoint holds) are the new ones."""
    versions, channels = state.versions, state.channels
    new_versions = {c: v for c, v in versions.items() if v > saved_max}
    values = {}
    for chan in versions if checkpointer.full_values else new_versions:
        snapshot = channels[chan].stored()
        if snapshot is not MISSING:
            values[chan] = snapshot
    step_updated = None if updated is None else tuple(updated)
    checkpoint = Checkpoint(checkpoint_id, ts, values, dict(versions), dict(state.seen), step_updated)
    checkpointer.put(parent, checkpoint, metadata, new_versions)


def committed_writes(
    task: Task, saved: Sequence[tuple[str, Any]], send_queue: SendQueue | None
) -> list[tuple[str, Any]]:
    """A finished task's writes with what says how it ended: the interrupt it paused on, its error, or
    that it finished without output. `saved`: its writes saved in an earlier run of its step."""
    writes: list[tuple[str, Any]] = list(task.writes)
    if task.interrupts is not None:
        writes.append((INTERRUPT, list(task.interrupts)))
    elif task.error is not None:
        # its answered interrupts and the one it was asking stay (as LangGraph's writes, which the
        # error does not replace), so an invalid resume value can be answered again
        asked = [(c, v) for c, v in saved if c == INTERRUPT]
        writes = [(ERROR, repr(task.error)), *([(RESUME, list(task.resume))] if task.resume else []), *asked]
        if task.done:  # done with an error: its error handler took over
            writes.append((ERROR_SOURCE, task.name))
    else:
        if all(c in CONTROL_WRITES for c, _ in writes):  # finished without output: say it finished
            writes.append((NO_WRITES, None))
        # the questions it asked before it finished stay on record (a step's history shows them)
        writes += [(c, v) for c, v in saved if c == INTERRUPT]
    if send_queue is not None:
        writes = send_queue.persistable(writes)
    return writes
