"""Compiled graphs run by a node of a running graph: as the node itself (`add_node("sub", compiled)`)
or from inside the node's function (`sub.invoke(...)`). Without a checkpointer of their own they use
the parent run's, under the namespace `<node>:<task id>`, as LangGraph does: an interrupt or a static
breakpoint inside pauses the parent, and the parent's resume continues the subgraph where it stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import NULL_TASK_ID, CheckpointTuple
from agent_runtime.engine.spec import INTERRUPT
from agent_runtime.errors import GraphInterrupt
from agent_runtime.types import Command

if TYPE_CHECKING:
    from agent_runtime.engine.algo import Task
    from agent_runtime.engine.loop import Run
    from agent_runtime.pregel import CompiledGraph


def inherits(run: Run, subgraph: CompiledGraph) -> bool:
    """A subgraph without a checkpointer of its own runs on the parent's thread, if it has one."""
    return run.checkpointer is not None and subgraph.checkpointer is None


async def run_subgraph(run: Run, task: Task, subgraph: CompiledGraph, arg: Any) -> dict[str, Any]:
    """The subgraph's output state (the task's update); raises GraphInterrupt when it paused."""
    configurable = {**run.config.get("configurable", {}), "checkpoint_ns": f"{task.name}:{task.id}"}
    configurable.pop("checkpoint_id", None)
    config = {"configurable": configurable, "recursion_limit": run.recursion_limit}
    if not inherits(run, subgraph):
        return await subgraph.invoke_from(None, arg, config)
    assert run.checkpointer is not None
    saved = run.checkpointer.get_tuple(config)
    if saved is not None and any(c == INTERRUPT for _, c, _ in saved.pending_writes):
        arg = _resume_command(run, saved)
    sub = subgraph._new_run(arg, config, frozenset(), run.durability, None, checkpointer=run.checkpointer)
    async for _ in sub.events_iter():
        pass
    if sub.status.startswith("interrupt"):
        if not sub.interrupts:  # a static breakpoint: mark it, so the parent's resume goes on from it
            run.checkpointer.put_writes(sub._cp_config(), [(INTERRUPT, [])], NULL_TASK_ID)
        raise GraphInterrupt(tuple(sub.interrupts))
    return subgraph.shape_output(sub.output())


def _resume_command(run: Run, saved: CheckpointTuple) -> Command | None:
    """What the paused subgraph is resumed with: only the answers to its own interrupts (its siblings
    get theirs), or the run's single answer; None goes on past a breakpoint or asks again."""
    source = run.resume_source
    own = {i.id for _, c, v in saved.pending_writes if c == INTERRUPT for i in v}
    answers = {iid: source.by_id.pop(iid) for iid in own & source.by_id.keys()}
    if answers:
        return Command(resume=answers)
    if source.value is not MISSING and own:
        value, source.value = source.value, MISSING
        return Command(resume=value)
    return None
