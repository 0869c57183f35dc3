"""Run-time topology diagnostics: which task triggered which, to explain surprises after the fact.

* a node that ran twice from one fan-out (langgraph #5979): its second run does not descend from its
  first run, but both descend from a common task (the fan-out);
* a join still waiting when the run ended (a conditional edge skipped one of its inputs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_runtime.channels import NamedBarrierValue
from agent_runtime.engine.algo import PUSH, ChannelState, Task
from agent_runtime.engine.spec import TASKS, GraphSpec

_MAX_WALK = 10_000  # bound on records visited per check, so diagnostics never dominate a long run


@dataclass(slots=True, eq=False)
class Record:
    name: str
    step: int
    parents: tuple[Record, ...]


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
    def __init__(self, spec: GraphSpec) -> None:
        self.spec = spec
        self.pending: dict[str, list[Record]] = {}
        self.sends: list[Record] = []
        self.last_run: dict[str, Record] = {}
        self.duplicates: list[DuplicateRun] = []
        # joins and deferred triggers collect writers over several supersteps until they fire
        self._accumulating = {c for c in spec.trigger_to_nodes if c.startswith("join:")} | set(spec.finishable)

    def tasks_started(self, step: int, tasks: Iterable[Task], state: ChannelState) -> None:
        for task in tasks:
            if task.kind == PUSH:
                parents: tuple[Record, ...] = (self.sends[task.index],) if task.index < len(self.sends) else ()
            else:
                fired = [c for c in task.triggers if state.channels[c].is_available()]
                parents = tuple(w for c in fired for w in self.pending.get(c, ()))
                for chan in fired:
                    if chan in self._accumulating:
                        self.pending.pop(chan, None)
            record = Record(task.name, step, parents)
            task.record = record
            previous = self.last_run.get(task.name)
            if previous is not None and previous.step < step and task.kind != PUSH:
                self._check(previous, record)
            self.last_run[task.name] = record

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
        pending = self.pending
        new: dict[str, list[Record]] = {}
        sends: list[Record] = []
        for task in tasks:
            for chan, value in task.writes:
                if chan == TASKS:
                    sends.extend([task.record] * (len(value) if isinstance(value, list) else 1))
                elif chan in self.spec.trigger_to_nodes:
                    new.setdefault(chan, []).append(task.record)
        for chan in [c for c in pending if c not in self._accumulating]:
            del pending[chan]
        for chan, records in new.items():
            pending.setdefault(chan, []).extend(records)
        self.sends = sends

    def waiting_joins(self, state: ChannelState) -> list[WaitingJoin]:
        out = []
        for chan, (names, node) in self.spec.joins.items():
            channel = state.channels[chan]
            if isinstance(channel, NamedBarrierValue) and channel.seen and channel.seen != names:
                out.append(WaitingJoin(chan, node, tuple(sorted(channel.seen)), tuple(sorted(names - channel.seen))))
        return out
