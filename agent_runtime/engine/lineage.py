"""Run-time topology diagnostics: which task triggered which, to explain surprises after the fact.

* a node that ran twice from one fan-out (langgraph #5979): its second run does not descend from its
  first run, but both descend from a common task (the fan-out);
* a join still waiting when the run ended (a conditional edge skipped one of its inputs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent_runtime.channels import NamedBarrierValue
from agent_runtime.constants import TASKS
from agent_runtime.engine.algo import PUSH, ChannelState, Task
from agent_runtime.engine.spec import GraphSpec

_MAX_WALK = 10_000  # bound on records visited per check, so diagnostics never dominate a long run


class Record:
    """One task run; `parents` are the runs whose writes triggered it (compared by identity)."""

    __slots__ = ("name", "parents", "step")

    def __init__(self, name: str, step: int, parents: Sequence[Record]) -> None:
        self.name = name
        self.step = step
        self.parents = parents


@dataclass(frozen=True, slots=True)
class DuplicateRun:
    node: str
    steps: tuple[int, int]
    fanout: str
    fanout_step: int
    paths: tuple[tuple[str, ...], tuple[str, ...]]

    def __str__(self) -> str:
        first, second = (" -> ".join(p) for p in self.paths)
        return (
            f"node '{self.node}' ran twice (steps {self.steps[0]} and {self.steps[1]}) from the fan-out at "
            f"'{self.fanout}' (step {self.fanout_step}): paths {first} and {second} reach it in different "
            f"supersteps. Fix: add_node('{self.node}', ..., defer=True), or a join "
            f"add_edge([{', '.join(repr(p[-2]) for p in self.paths)}], '{self.node}')"
        )


@dataclass(frozen=True, slots=True)
class WaitingJoin:
    channel: str
    node: str
    arrived: tuple[str, ...]
    missing: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"join into '{self.node}' was still waiting when the run ended: {list(self.arrived)} arrived, "
            f"{list(self.missing)} never ran, so '{self.node}' never ran. A conditional edge probably skipped "
            f"{list(self.missing)}; use add_node('{self.node}', ..., defer=True) with separate edges instead"
        )


def _ancestors(record: Record, stop_step: int) -> set[int]:
    seen: set[int] = set()
    stack = [record]
    while stack and len(seen) < _MAX_WALK:
        current = stack.pop()
        if id(current) in seen or current.step < stop_step:
            continue
        seen.add(id(current))
        stack.extend(current.parents)
    return seen


def _path_from(ancestor: Record, record: Record) -> tuple[str, ...]:
    """Names on one parent chain from `ancestor` down to `record`."""
    path = [record.name]
    current = record
    while current is not ancestor:
        candidates = [p for p in current.parents if id(ancestor) in _ancestors(p, ancestor.step)]
        if not candidates:
            break
        current = candidates[0]
        path.append(current.name)
    return tuple(reversed(path))


class Lineage:
    """Parent links between task runs, kept cheaply at every superstep (this is on the hot path)."""

    def __init__(self, spec: GraphSpec) -> None:
        self.spec = spec
        # trigger channel -> runs whose writes are waiting in it (lists are replaced, never shared
        # while still growing, so a Record may keep the list it was given)
        self.pending: dict[str, list[Record]] = {}
        self.sends: list[Record] = []
        self.last_run: dict[str, Record] = {}
        self.duplicates: list[DuplicateRun] = []
        self._triggers = frozenset(spec.trigger_to_nodes)
        # joins and deferred triggers collect writers over several supersteps until they fire
        self._accumulating = frozenset(c for c in spec.trigger_to_nodes if c.startswith("join:")) | frozenset(
            spec.finishable
        )

    def tasks_started(self, step: int, tasks: Iterable[Task], state: ChannelState) -> None:
        pending = self.pending
        last_run = self.last_run
        for task in tasks:
            parents: Sequence[Record]
            if task.kind == PUSH:
                parents = (self.sends[task.index],) if task.index < len(self.sends) else ()
            elif len(task.triggers) == 1:  # the only trigger is the one that fired
                chan = task.triggers[0]
                parents = pending.pop(chan, ()) if chan in self._accumulating else pending.get(chan, ())
            else:
                fired = [c for c in task.triggers if state.channels[c].is_available()]
                parents = [w for c in fired for w in pending.get(c, ())]
                for chan in fired:
                    if chan in self._accumulating:
                        pending.pop(chan, None)
            record = Record(task.name, step, parents)
            task.record = record
            previous = last_run.get(task.name)
            if previous is not None and task.kind != PUSH and previous.step < step:
                self._check(previous, record)
            last_run[task.name] = record

    def _check(self, first: Record, second: Record) -> None:
        if first in second.parents or id(first) in _ancestors(second, first.step):
            return  # a loop: the second run descends from the first
        first_line = _ancestors(first, 0)
        stack, visited = [second], set[int]()
        while stack and len(visited) < _MAX_WALK:
            current = stack.pop(0)
            if id(current) in visited:
                continue
            visited.add(id(current))
            if id(current) in first_line:
                self.duplicates.append(
                    DuplicateRun(
                        second.name,
                        (first.step, second.step),
                        current.name,
                        current.step,
                        (_path_from(current, first), _path_from(current, second)),
                    )
                )
                return
            stack.extend(current.parents)

    def writes_applied(self, tasks: Iterable[Task]) -> None:
        accumulating = self._accumulating
        pending = self.pending
        if pending:  # one-step signals are gone after the barrier
            self.pending = pending = {c: v for c, v in pending.items() if c in accumulating} if accumulating else {}
        triggers = self._triggers
        sends: list[Record] = []
        for task in tasks:
            record = task.record
            for chan, value in task.writes:
                if chan in triggers:
                    bucket = pending.get(chan)
                    if bucket is None:
                        pending[chan] = [record]
                    elif bucket[-1] is not record:
                        bucket.append(record)
                elif chan == TASKS:
                    sends.extend([record] * (len(value) if isinstance(value, list) else 1))
        self.sends = sends

    def waiting_joins(self, state: ChannelState) -> list[WaitingJoin]:
        out = []
        for chan, (names, node) in self.spec.joins.items():
            channel = state.channels[chan]
            if isinstance(channel, NamedBarrierValue) and channel.seen and channel.seen != names:
                out.append(WaitingJoin(chan, node, tuple(sorted(channel.seen)), tuple(sorted(names - channel.seen))))
        return out
