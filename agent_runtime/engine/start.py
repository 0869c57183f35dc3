"""How a run starts: a new input (which abandons what the thread had pending), or None / a Command
that resumes the thread's checkpoint (answers to its interrupts, an update, a goto), or replays an
earlier checkpoint of the thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_runtime.checkpoint.base import NULL_TASK_ID
from agent_runtime.constants import INTERRUPT, RESERVED
from agent_runtime.core.types import START, Command
from agent_runtime.engine import events
from agent_runtime.engine.algo import Task, apply_writes, prepare_tasks
from agent_runtime.engine.replay import ReplayBound
from agent_runtime.engine.resume_values import set_resume
from agent_runtime.engine.tasks import route, state_updates
from agent_runtime.errors import EmptyInputError

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView


def start(run: RunView, has_checkpoint: bool) -> None:
    """Take the run's input: a new input, or None / a Command resuming the thread's checkpoint."""
    value = run.input
    answers = isinstance(value, Command) and value.resume is not None
    named = "checkpoint_id" in run.config.get("configurable", {})
    if run._loaded is not None and named and not answers and run.replay is None:
        run.replay = ReplayBound.of(run._loaded)
    if value is None or isinstance(value, Command):
        if isinstance(value, Command) and value.resume is not None and not run.checkpointing:
            raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
        if not has_checkpoint:
            if value is None:
                raise EmptyInputError("Received no input and found no checkpoint to resume from")
            raise RuntimeError("Cannot resume: no checkpoint for this thread")
        _resume(run, value)
        return
    _fresh_input(run, value, has_checkpoint)


def _time_travels(run: RunView, command: Command | None) -> bool:
    """A run from a named checkpoint that does not answer an interrupt replays that step (as
    LangGraph): saved answers and finished tasks' writes are dropped, so its tasks run again and
    their interrupts are asked again."""
    if "checkpoint_id" not in run.config.get("configurable", {}):
        return False
    if command is not None and command.resume is not None:
        return False
    run._pending_writes = [w for w in run._pending_writes if w[0] == NULL_TASK_ID]
    return True


def _resume(run: RunView, command: Command | None) -> None:
    state = run.state
    replay = _time_travels(run, command)
    # the replay starts a branch of its own (a "fork" checkpoint, whose id gives its tasks new ids),
    # so later resumes of the thread continue it; a checkpoint saved as a branch point already is one
    assert run._loaded is not None
    forks = replay and run._loaded.metadata.get("source") not in ("update", "fork")
    null_writes = [(c, v) for t, c, v in run._pending_writes if t == NULL_TASK_ID and c not in RESERVED]
    if command is not None:
        if command.resume is not None:
            set_resume(run, command.resume)
        writes, _ = state_updates(run.spec.schema, command.update, Task.pseudo("__input__", []))
        gotos = command.goto_targets()
        new_writes = writes + (route(run, START, gotos) if gotos else [])
        if new_writes and run.checkpointer is not None and not forks:  # a fork carries them itself
            # saved after the input writes of earlier resumes of this step, which a saver keys by position
            saved = [(c, v) for t, c, v in run._pending_writes if t == NULL_TASK_ID]
            run.checkpointer.put_writes(run._cp_config(), saved + new_writes, NULL_TASK_ID)
        null_writes += new_writes
    if null_writes:
        apply_writes(run.spec, state, [Task.pseudo("__input__", null_writes)])
        state.seen.setdefault("__input__", {})  # LangGraph records its input task as having seen nothing
    state.seen[INTERRUPT] = dict(state.versions)
    if forks:
        run.save_branch_point("fork")
        run.step += 1
    elif run.checkpoint_events:
        events.checkpoint_loaded(run, run._loaded)
    if "values" in run.modes:
        run._emit("values", run.output())


def _fresh_input(run: RunView, value: Any, has_checkpoint: bool) -> None:
    writes = run.input_writes(value)
    discarded: list[Task] = []
    if has_checkpoint:
        # a new input abandons what the thread had pending: mark those triggers as seen
        discarded = prepare_tasks(run.spec, run.state, run.step, run.checkpoint_id, None)
        for task in discarded:
            task.writes = []
    run.updated = apply_writes(
        run.spec,
        run.state,
        [*discarded, Task.pseudo("__input__", writes)],
    )
    run.state.seen.setdefault("__input__", {})  # LangGraph records its input task as having seen nothing
    run._pending_writes = []
    run._save("input")
    run.step += 1
