"""Pure superstep algebra: which tasks run next (`prepare_tasks`) and the barrier (`apply_writes`).

Follows LangGraph's pregel/_algo.py rule for rule (see shared/specs/runtime-semantics.md §2.3, §2.5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_runtime.channels import BaseChannel
from agent_runtime.constants import PUSH_TRIGGER, RESERVED, TASKS
from agent_runtime.core.types import Interrupt, Send, TimeoutPolicy
from agent_runtime.engine.spec import GraphSpec, NodeSpec

logger = logging.getLogger(__name__)

PULL = 0
PUSH = 1
_EMPTY: tuple[Any, ...] = ()
_NO_SEEN: dict[str, int] = {}


@dataclass(slots=True)
class ChannelState:
    """The mutable state of a run: channel values, their versions and what each node has seen.

    Inner `seen` dicts are replaced, never mutated, so a checkpoint can share them safely."""

    channels: dict[str, BaseChannel]
    versions: dict[str, int]
    seen: dict[str, dict[str, int]]
    max_version: int = 0

    def __post_init__(self) -> None:
        self.max_version = max(self.versions.values(), default=0)


class Task:
    """One node run in one superstep (a PULL task triggered by channels, or a PUSH task from a Send)."""

    __slots__ = (
        "cached",
        "done",
        "error",
        "id",
        "index",
        "input",
        "interrupts",
        "kind",
        "name",
        "node",
        "record",
        "resume",
        "terminate",
        "timeout",
        "triggers",
        "writes",
    )

    def __init__(
        self,
        name: str,
        id: str,
        node: NodeSpec | None,
        kind: int,
        index: int,
        triggers: tuple[str, ...],
        input: Any = None,
        writes: list[tuple[str, Any]] | None = None,
        timeout: TimeoutPolicy | None = None,
    ) -> None:
        self.name = name
        self.id = id
        self.node = node
        self.kind = kind  # PULL or PUSH
        self.index = index  # Send index for PUSH tasks
        self.triggers = triggers
        self.input = input  # the Send argument of a PUSH task
        self.writes: list[tuple[str, Any]] = writes if writes is not None else []
        self.cached = False  # its node returned a cached result (node caching)
        self.done = False  # writes are final (the task ran, or its saved writes were re-applied)
        self.interrupts: tuple[Interrupt, ...] | None = None  # set when it paused (maybe at a breakpoint)
        self.resume: list[Any] = []
        self.error: BaseException | None = None
        self.terminate: Any = None  # a Terminate returned by the node
        self.record: Any = None  # lineage record (which tasks triggered this one)
        self.timeout = timeout  # a Send's TimeoutPolicy, instead of its node's

    @property
    def hidden(self) -> bool:
        """The hidden __start__ task and pseudo-tasks do not show in streams and reports."""
        return self.node is None or self.node.fn is None

    @classmethod
    def pseudo(cls, name: str, writes: list[tuple[str, Any]], triggers: tuple[str, ...] = ()) -> Task:
        """Writes that do not come from a node run: graph input, update_state, resume commands."""
        return cls(name, "", None, PULL, 0, triggers, writes=writes)


def task_id(checkpoint_id: str, step: int, name: str, kind: int, index: int) -> str:
    """Deterministic, so a resumed step re-creates the same ids and finds its saved writes."""
    if kind == PULL:
        return f"{checkpoint_id}:{step}:{name}"
    return f"{checkpoint_id}:{step}:push:{index}:{name}"


def prepare_tasks(
    spec: GraphSpec,
    state: ChannelState,
    step: int,
    checkpoint_id: str,
    updated_channels: set[str] | None,
) -> list[Task]:
    """PUSH tasks (one per pending Send, in order) then PULL tasks (candidates sorted by name)."""
    tasks: list[Task] = []
    channels = state.channels
    topic = channels[TASKS]
    if topic.is_available():
        for index, send in enumerate(topic.get()):
            if not isinstance(send, Send):
                continue
            node = spec.nodes.get(send.node)
            if node is None:
                logger.warning("Ignoring Send to unknown node %r", send.node)
                continue
            tasks.append(
                Task(
                    send.node,
                    task_id(checkpoint_id, step, send.node, PUSH, index),
                    node,
                    PUSH,
                    index,
                    (PUSH_TRIGGER,),
                    send.arg,
                    timeout=send.timeout,
                )
            )
    if updated_channels is None:
        candidates: Iterable[str] = sorted(spec.nodes)
    elif len(updated_channels) == 1:
        (only,) = updated_channels
        candidates = spec.trigger_to_nodes.get(only, _EMPTY)
    else:
        names: set[str] = set()
        for chan in updated_channels:
            names.update(spec.trigger_to_nodes.get(chan, _EMPTY))
        candidates = sorted(names)
    versions = state.versions
    for name in candidates:
        node = spec.nodes[name]
        seen = state.seen.get(name)
        for chan in node.triggers:
            if channels[chan].is_available() and versions.get(chan, 0) > (seen.get(chan, 0) if seen else 0):
                tasks.append(Task(name, task_id(checkpoint_id, step, name, PULL, 0), node, PULL, 0, node.triggers))
                break
    return tasks


def apply_writes(spec: GraphSpec, state: ChannelState, tasks: Sequence[Task]) -> set[str]:
    """The barrier; `tasks` must be in barrier order (`sort_tasks`). Pseudo-tasks without triggers
    (input, update_state, resume) do not count as a superstep: nothing is cleared or finished."""
    channels = state.channels
    versions = state.versions
    bump_step = False
    # 1-3: mark the pre-write versions of each task's triggers as seen
    for task in tasks:
        triggers = task.triggers
        if triggers:
            bump_step = True
            if triggers[0] != PUSH_TRIGGER:
                seen = dict(state.seen.get(task.name, _NO_SEEN))
                for chan in triggers:
                    if chan in versions:
                        seen[chan] = versions[chan]
                state.seen[task.name] = seen
    # 4: one shared new version for everything bumped in this step
    next_version = state.max_version + 1
    changed = False
    # 5: consume the triggers that fired (resets joins, disarms deferred triggers)
    consumable = spec.consumable
    if consumable:
        for chan in {c for task in tasks for c in task.triggers if c in consumable}:
            if channels[chan].consume():
                versions[chan] = next_version
                changed = True
    # 6: group writes by channel, in task order
    grouped: dict[str, list[Any]] = {}
    for task in tasks:
        for chan, value in task.writes:
            bucket = grouped.get(chan)
            if bucket is not None:
                bucket.append(value)
            elif chan in channels:
                grouped[chan] = [value]
            elif chan not in RESERVED:
                logger.warning("Task %s wrote to unknown channel %s, ignoring it", task.name, chan)
    # 7: apply (LastValue raises InvalidUpdateError on 2+ writes)
    updated: set[str] = set()
    for chan, values in grouped.items():
        channel = channels[chan]
        if channel.update(values):
            versions[chan] = next_version
            changed = True
            if channel.is_available():
                updated.add(chan)
    if bump_step:
        # 8: new-step notification: ephemeral signals and consumed Sends are cleared
        for chan in spec.step_sensitive:
            channel = channels[chan]
            if chan not in updated and channel.is_available() and channel.update(_EMPTY):
                versions[chan] = next_version
                changed = True
                if channel.is_available():
                    updated.add(chan)
        # 9: nothing triggers a PULL task next: finish() arms deferred nodes
        if spec.finishable and updated.isdisjoint(spec.trigger_to_nodes):
            for chan in spec.finishable:
                channel = channels[chan]
                if channel.finish():
                    versions[chan] = next_version
                    changed = True
                    if channel.is_available():
                        updated.add(chan)
    if changed:
        state.max_version = next_version
    return updated


def _barrier_key(task: Task) -> tuple[int, str, int]:
    return (task.kind, task.name if task.kind == PULL else "", task.index)


def sort_tasks(tasks: list[Task]) -> list[Task]:
    """Barrier order: PULL tasks by node name, then Send tasks by index (decides reducer order)."""
    return sorted(tasks, key=_barrier_key) if len(tasks) > 1 else tasks


def task_namespace(configurable: Mapping[str, Any], task: Task) -> str:
    """The checkpoint namespace of what task `task` runs, under the namespace of its graph."""
    parent_ns = configurable.get("checkpoint_ns", "")
    own = f"{task.name}:{task.id}"
    return f"{parent_ns}|{own}" if parent_ns else own
