"""UntrackedValue and AnyValue: LangGraph's last-write channels without its one-write rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from agent_runtime.channels.base import MISSING, SingleValueChannel
from agent_runtime.channels.topic import Topic
from agent_runtime.core.types import Send
from agent_runtime.errors import InvalidUpdateError


class UntrackedValue(SingleValueChannel):
    """The last value written, never saved in a checkpoint (a resumed run starts without it).
    `guard=True`: at most one write per superstep."""

    __slots__ = ("guard",)
    STEP_SENSITIVE = False

    def __init__(self, typ: Any = Any, guard: bool = True, *, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard

    def new(self) -> Self:
        return type(self)(self.typ, self.guard, key=self.key)

    def checkpoint(self) -> Any:
        return MISSING

    def copy(self) -> Self:
        channel = self.new()
        channel.value = self.value
        return channel

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) > 1 and self.guard:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value per step. "
                "Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True


class AnyValue(SingleValueChannel):
    """The last of any number of writes per superstep (they are assumed equal); a superstep
    without writes clears it."""

    __slots__ = ()

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True


class SendQueue(Topic):
    """The pending-Send queue of a graph with UntrackedValue keys: a Send whose argument is the state
    (a dict) is saved without those keys, as LangGraph saves it (they are never checkpointed, and
    may not even be copyable). The running graph keeps them."""

    __slots__ = ("untracked",)

    def __init__(self, untracked: frozenset[str], *, key: str = "") -> None:
        super().__init__(key=key)
        self.untracked = untracked

    def new(self) -> Self:
        return type(self)(self.untracked, key=self.key)

    def stored(self) -> Any:
        values = self.checkpoint()
        if values is MISSING:
            return MISSING
        return [self._without_untracked(v) for v in values]

    def persistable(self, writes: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """A task's writes as its pending writes save them (as LangGraph's): none to an UntrackedValue
        key, and the Sends without those keys."""
        return [(c, self._without_untracked(v) if c == self.key else v) for c, v in writes if c not in self.untracked]

    def _without_untracked(self, packet: Any) -> Any:
        if not isinstance(packet, Send) or not isinstance(packet.arg, dict):
            return packet
        return Send(packet.node, {k: v for k, v in packet.arg.items() if k not in self.untracked})
