"""Compiled graphs run by a node of a running graph: as the node itself (`add_node("sub", compiled)`)
or from inside the node's function (`sub.invoke(...)`). Without a checkpointer of their own they use
the parent run's, under the namespace `<parent ns>|<node>:<task id>`, as LangGraph does: an interrupt or
a static breakpoint inside pauses the parent, and the parent's resume continues the subgraph where it
stopped. A run streamed with `subgraphs=True` passes its stream modes down and forwards the subgraph's
events, as they come, under the subgraph's namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import NULL_TASK_ID, CheckpointTuple
from agent_runtime.engine.spec import INTERRUPT
from agent_runtime.errors import GraphInterrupt
from agent_runtime.types import Command

if TYPE_CHECKING:
    from agent_runtime.engine.algo import Task
    from agent_runtime.engine.loop import Event, Run
    from agent_runtime.pregel import CompiledGraph


def inherits(run: Run, subgraph: CompiledGraph) -> bool:
    """A subgraph without a checkpointer of its own runs on the parent's thread, if it has one."""
    return run.checkpointer is not None and subgraph.checkpointer is None


def task_namespace(configurable: Mapping[str, Any], task: Task) -> str:
    """The checkpoint namespace of what task `task` runs, under the namespace of its graph."""
    parent_ns = configurable.get("checkpoint_ns", "")
    own = f"{task.name}:{task.id}"
    return f"{parent_ns}|{own}" if parent_ns else own


def subgraph_state(config: dict[str, Any], task: Task) -> dict[str, Any] | None:
    """A task's `state` in a checkpoint event (or a snapshot without `subgraphs=True`): for a node that is
    a compiled graph, the config of its subgraph's checkpoints (as LangGraph's signal that they exist)."""
    node = task.node
    if node is None or node.subgraph is None:
        return None
    configurable = config.get("configurable", {})
    return {
        "configurable": {
            "thread_id": configurable.get("thread_id"),
            "checkpoint_ns": task_namespace(configurable, task),
        }
    }


async def run_subgraph(run: Run, task: Task, subgraph: CompiledGraph, arg: Any) -> dict[str, Any]:
    """The subgraph's output state (the task's update); raises GraphInterrupt when it paused on the
    parent's thread (a subgraph with a checkpointer of its own returns its interrupts as its output)."""
    parent = run.config.get("configurable", {})
    configurable = {**parent, "checkpoint_ns": task_namespace(parent, task)}
    configurable.pop("checkpoint_id", None)
    # the parent's tags, metadata and callbacks reach the subgraph's nodes, once (as LangGraph's)
    config = {**run.config, "configurable": configurable, "recursion_limit": run.recursion_limit}
    checkpointer = run.checkpointer if inherits(run, subgraph) else None
    if checkpointer is not None:
        saved = checkpointer.get_tuple(config)
        if saved is not None and any(c == INTERRUPT for _, c, _ in saved.pending_writes):
            arg = _resume_command(run, saved)
    modes = run.modes if run.subgraphs else frozenset()
    durability = run.durability if checkpointer is not None else None
    sub = subgraph._new_run(arg, config, modes, durability, None, checkpointer=checkpointer)
    if run.subgraphs:
        sub.subgraphs = True
        sub.stream_ns = (*run.stream_ns, f"{task.name}:{task.id}")
    async for event in sub.events_iter():
        forward(run, event)
    if checkpointer is None:
        return subgraph.result_of(sub)
    if sub.status.startswith("interrupt"):
        if not sub.interrupts:  # a static breakpoint: mark it, so the parent's resume goes on from it
            checkpointer.put_writes(sub._cp_config(), [(INTERRUPT, [])], NULL_TASK_ID)
        raise GraphInterrupt(tuple(sub.interrupts))
    return subgraph.shape_output(sub.output())


def forward(run: Run, event: Event) -> None:
    """A subgraph's event into the stream of `run` (from any thread: a graph invoked inside a sync node
    runs on a pool thread), waking the step that waits for its tasks, so the event goes out at once."""
    with run.events_lock:
        run.events.append(event)
    if run.waker is not None:
        run.waker.wake()


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
