"""Compiled graphs run by a node of a running graph: as the node itself (`add_node("sub", compiled)`)
or from inside the node's function (`sub.invoke(...)`). Without a checkpointer of their own they use
the parent run's, under the namespace `<parent ns>|<node>:<task id>`, as LangGraph does: an interrupt or
a static breakpoint inside pauses the parent, and the parent's resume continues the subgraph where it
stopped. A run streamed with `subgraphs=True` passes its stream modes down and forwards the subgraph's
events, as they come, under the subgraph's namespace.

`compile(checkpointer=True)` makes a subgraph stateful: its checkpoints go under the namespace without
task ids (`<node>`), so each call continues the thread's one history of it; `checkpointer=False` opts
out of the parent's checkpointer (no interrupts inside, no state kept)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent_runtime.channels import MISSING
from agent_runtime.checkpoint.base import NULL_TASK_ID, BaseCheckpointer, CheckpointTuple
from agent_runtime.constants import INTERRUPT
from agent_runtime.core.protocol import CONFIG_KEY_RUNTIME, CONFIG_KEY_TASK_ID
from agent_runtime.core.types import Command
from agent_runtime.engine.algo import task_namespace
from agent_runtime.engine.callbacks import CALLBACK_MODES
from agent_runtime.engine.spec import EngineGraph, RunT
from agent_runtime.engine.task_status import pending_interrupts
from agent_runtime.errors import GraphDrained, GraphInterrupt

if TYPE_CHECKING:
    from agent_runtime.engine.algo import Task
    from agent_runtime.engine.control import RunControl
    from agent_runtime.engine.run_view import RunView


def inherits(run: RunView, subgraph: EngineGraph[Any]) -> bool:
    """A subgraph runs on the parent's thread when the parent has a checkpointer (as LangGraph, whose
    parent lends its checkpointer even to a subgraph compiled with one of its own), unless compiled
    with `checkpointer=False`."""
    return run.checkpointer is not None and subgraph.persistence != "off"


def subgraph_namespace(
    configurable: Mapping[str, Any], task: Task, subgraph: EngineGraph[Any], call_index: int = 0
) -> str:
    """Where the subgraph `task` runs keeps its checkpoints: the task's namespace (plus `|<n>` for the
    n-th graph after the first that the task's function invokes), without the task ids for a stateful
    subgraph (one history per thread, as LangGraph's `checkpointer=True`)."""
    ns = task_namespace(configurable, task)
    if call_index:
        ns = f"{ns}|{call_index}"
    return subgraph.own_namespace(ns)


def subgraph_state(config: dict[str, Any], task: Task) -> dict[str, Any] | None:
    """A task's `state` in a checkpoint event (or a snapshot without `subgraphs=True`): for a node that is
    (or invokes) a compiled graph, the config of its subgraph's checkpoints (as LangGraph's signal that
    they exist; a stateful subgraph reads them without the task id)."""
    node = task.node
    if node is None or (node.subgraph is None and node.invoked_graph is None):
        return None
    configurable = config.get("configurable", {})
    ns = task_namespace(configurable, task)
    return {"configurable": {"thread_id": configurable.get("thread_id"), "checkpoint_ns": ns}}


async def run_subgraph(
    run: RunView,
    task: Task,
    subgraph: EngineGraph[RunT],
    arg: Any,
    call_index: int = 0,
    control: RunControl | None = None,
) -> dict[str, Any]:
    """The subgraph's output state (the task's update); raises GraphInterrupt when it paused (a subgraph
    with a checkpointer of its own under a parent without one returns its interrupts as its output).
    `call_index`: how many graphs the task's function invoked before this one; `control`: the one it
    was invoked with (`invoke(control=...)`), else it shares its parent's."""
    parent = run.config.get("configurable", {})
    ns = subgraph_namespace(parent, task, subgraph, call_index)
    configurable = {**parent, "checkpoint_ns": ns}
    configurable.pop("checkpoint_id", None)
    if control is not None:
        configurable[CONFIG_KEY_RUNTIME] = configurable[CONFIG_KEY_RUNTIME].override(control=control)
    # the parent's tags, metadata and callbacks reach the subgraph's nodes, once (as LangGraph's); the
    # parent's run id and name are its own chain run's (an event stream's run ids must not repeat)
    config = {k: v for k, v in run.config.items() if k not in ("run_id", "run_name")}
    config.update(configurable=configurable, recursion_limit=run.recursion_limit)
    checkpointer = run.checkpointer if inherits(run, subgraph) else None
    start_from: Any = MISSING
    if checkpointer is not None:
        arg, start_from = _starting_point(run, task, checkpointer, config, arg)
    if run.callbacks is not None:  # a subgraph of the task, for the callback handlers (engine/callbacks.py)
        configurable[CONFIG_KEY_TASK_ID] = task.id
    # the parent's "messages" / "tools" handlers, which it passes down, see the subgraph's models and tools
    modes = run.modes - CALLBACK_MODES if run.subgraphs else frozenset()
    durability = run.durability if checkpointer is not None else None
    sub = subgraph._new_run(arg, config, modes, durability, None, checkpointer=checkpointer)
    sub.nested, sub.replay, sub.start_from = True, run.replay, start_from
    if checkpointer is not None:
        sub.parents = {**run.parents, run.ns: run.checkpoint_id}
    if run.subgraphs:
        sub.subgraphs = True
        sub.stream_ns = tuple(ns.split("|"))  # its checkpoint namespace (a stateful one's has no task ids)
    try:
        async for event in sub.events_iter():
            run.forward(event)
    except GraphDrained:
        if checkpointer is not None:  # as a breakpoint's mark: the parent's resume goes on from here
            checkpointer.put_writes(sub._cp_config(), [(INTERRUPT, [])], NULL_TASK_ID)
        raise
    if checkpointer is None:
        if sub.interrupts and subgraph.checkpointer is None:  # no thread to resume on: the parent stops too
            raise GraphInterrupt(tuple(sub.interrupts))
        return subgraph.result_of(sub)
    if sub.status.startswith("interrupt"):
        if not sub.interrupts:  # a static breakpoint: mark it, so the parent's resume goes on from it
            checkpointer.put_writes(sub._cp_config(), [(INTERRUPT, [])], NULL_TASK_ID)
        raise GraphInterrupt(tuple(sub.interrupts))
    return subgraph.shape_output(sub.output())


def _starting_point(
    run: RunView, task: Task, checkpointer: BaseCheckpointer, config: dict[str, Any], arg: Any
) -> tuple[Any, Any]:
    """(input, checkpoint to start from: MISSING for the latest) of a subgraph on the parent's thread.
    The first run of a subgraph in a time-travelling run starts from its checkpoint the config's
    `checkpoint_map` names (it replays from there: `config` gets its id), or else from its last one
    saved before the replayed parent checkpoint. A resumed subgraph (the parent's task paused, in it or
    at its static breakpoint) goes on from its latest checkpoint; an update_state of it since then saved
    one without the pause mark, so the parent task's record counts too."""
    configurable = config["configurable"]
    ns = configurable["checkpoint_ns"]
    if run.replay is not None and run.replay.first_visit(ns):
        pinned = configurable.get("checkpoint_map", {}).get(ns)
        if pinned is not None:
            configurable["checkpoint_id"] = pinned
            return None, MISSING
        return arg, run.replay.checkpoint(checkpointer, config)
    paused = any(c == INTERRUPT for c, _ in run.saved_writes.get(task.id, ()))
    saved = checkpointer.get_tuple(config)
    if saved is not None and (paused or any(c == INTERRUPT for _, c, _ in saved.pending_writes)):
        return _resume_command(run, saved), MISSING
    return arg, MISSING


def with_checkpoint_map(config: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """A subgraph checkpoint's config as LangGraph shows it: with `checkpoint_map`, the checkpoint id of
    each graph above it and its own, so running the root graph with it time travels into the subgraph."""
    parents = metadata.get("parents")
    if not parents:
        return config
    configurable = config["configurable"]
    checkpoint_map = {**parents, configurable["checkpoint_ns"]: configurable["checkpoint_id"]}
    return {**config, "configurable": {**configurable, "checkpoint_map": checkpoint_map}}


def _resume_command(run: RunView, saved: CheckpointTuple) -> Command | None:
    """What the paused subgraph is resumed with: only the answers to its own interrupts (its siblings
    get theirs), or the run's single answer; None goes on past a breakpoint or asks again."""
    source = run.resume_source
    own = {i.id for i in pending_interrupts(saved.pending_writes)}
    answers = {iid: source.by_id.pop(iid) for iid in own & source.by_id.keys()}
    if answers:
        return Command(resume=answers)
    if source.value is not MISSING and own:
        value, source.value = source.value, MISSING
        return Command(resume=value)
    return None
