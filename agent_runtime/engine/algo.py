"""Pure superstep algebra: which tasks run next (`prepare_tasks`) and the barrier (`apply_writes`).

Follows LangGraph's pregel/_algo.py rule for rule (see shared/specs/runtime-semantics.md §2.3, §2.5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_runtime.channels import BaseChannel
from agent_runtime.engine.spec import PUSH_TRIGGER, RESERVED, TASKS, GraphSpec, NodeSpec
from agent_runtime.types import Interrupt, Send

logger = logging.getLogger(__name__)

PULL = 0
PUSH = 1
_EMPTY: tuple[Any, ...] = ()


@dataclass(slots=True)
class ChannelState:
    """The mutable state of a run: channel values, their versions and what each node has seen."""

    channels: dict[str, BaseChannel]
    versions: dict[str, int]
    seen: dict[str, dict[str, int]]

    def snapshot_values(self) -> dict[str, Any]:
        from agent_runtime.channels import MISSING

        out = {}
        for key, channel in self.channels.items():
            value = channel.checkpoint()
            if value is not MISSING:
                out[key] = value
        return out


@dataclass(slots=True)
class Task:
    name: str
    id: str
    node: NodeSpec
    kind: int  # PULL or PUSH
    index: int  # Send index for PUSH tasks
    triggers: tuple[str, ...]
    input: Any = None  # the Send arg for PUSH tasks; filled lazily for PULL tasks
    writes: list[tuple[str, Any]] = field(default_factory=list)
    done: bool = False  # True once the writes are final (ran, or re-applied from a checkpoint)
    interrupts: tuple[Interrupt, ...] = ()
    resume: list[Any] = field(default_factory=list)
    error: BaseException | None = None
    terminate: Any = None  # a Terminate returned by the node
    record: Any = None  # lineage record (which tasks triggered this one), for run-time diagnostics


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
                Task(send.node, task_id(checkpoint_id, step, send.node, PUSH, index), node, PUSH, index,
                     (PUSH_TRIGGER,), send.arg)
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


def apply_writes(
    spec: GraphSpec,
    state: ChannelState,
    tasks: Sequence[Task] | Sequence[tuple[tuple[str, ...], str, Sequence[tuple[str, Any]]]],
    *,
    bump_step: bool | None = None,
) -> set[str]:
    """The barrier. `tasks` are Task objects, or (triggers, name, writes) tuples for pseudo-tasks
    (graph input, update_state, resume commands) which have no triggers and so do not bump the step."""
    items = _normalise(tasks)
    if bump_step is None:
        bump_step = any(triggers for triggers, _, _ in items)
    channels = state.channels
    versions = state.versions
    # 1-3: tasks are sorted by the caller's key; mark the pre-write trigger versions as seen
    for triggers, name, _ in items:
        if triggers and triggers[0] != PUSH_TRIGGER:
            seen = state.seen.get(name)
            if seen is None:
                seen = state.seen[name] = {}
            for chan in triggers:
                if chan in versions:
                    seen[chan] = versions[chan]
    # 4: one shared new version for everything bumped in this step
    next_version = (max(versions.values()) if versions else 0) + 1
    # 5: consume the triggers that fired
    consumed = {c for triggers, _, _ in items for c in triggers if c not in RESERVED and c in channels}
    for chan in consumed:
        if channels[chan].consume():
            versions[chan] = next_version
    # 6: group writes by channel, in task order
    grouped: dict[str, list[Any]] = {}
    for _, name, writes in items:
        for chan, value in writes:
            if chan in RESERVED:
                continue
            if chan not in channels:
                logger.warning("Task %s wrote to unknown channel %s, ignoring it", name, chan)
                continue
            bucket = grouped.get(chan)
            if bucket is None:
                grouped[chan] = [value]
            else:
                bucket.append(value)
    # 7: apply (LastValue raises InvalidUpdateError on 2+ writes)
    updated: set[str] = set()
    for chan, values in grouped.items():
        channel = channels[chan]
        if channel.update(values):
            versions[chan] = next_version
            if channel.is_available():
                updated.add(chan)
    if not bump_step:
        return updated
    # 8: new-step notification: ephemeral signals and consumed Sends are cleared
    for chan, channel in channels.items():
        if chan not in updated and channel.is_available() and channel.update(_EMPTY):
            versions[chan] = next_version
            if channel.is_available():
                updated.add(chan)
    # 9: nothing triggers a PULL task next: finish() arms deferred nodes
    if spec.finishable and updated.isdisjoint(spec.trigger_to_nodes):
        for chan in spec.finishable:
            channel = channels[chan]
            if channel.finish():
                versions[chan] = next_version
                if channel.is_available():
                    updated.add(chan)
    return updated


def _normalise(
    tasks: Sequence[Task] | Sequence[tuple[tuple[str, ...], str, Sequence[tuple[str, Any]]]],
) -> list[tuple[tuple[str, ...], str, Sequence[tuple[str, Any]]]]:
    out: list[tuple[tuple[str, ...], str, Sequence[tuple[str, Any]]]] = []
    for task in tasks:
        if isinstance(task, Task):
            out.append((task.triggers, task.name, task.writes))
        else:
            out.append(task)
    return out


def sort_tasks(tasks: Iterable[Task]) -> list[Task]:
    """Barrier order: PULL tasks by node name, then Send tasks by index (decides reducer order)."""
    return sorted(tasks, key=lambda t: (t.kind, t.name if t.kind == PULL else "", t.index))
