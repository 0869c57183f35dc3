"""Channel protocol: a named, versioned value that tasks write and the barrier updates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class DeltaSnapshot:
    """A DeltaChannel's value as a checkpoint stores it."""

    value: Any


class EmptyChannelError(Exception):
    """`get()` on a channel that holds no value."""


class BaseChannel:
    """Subclasses keep their state in slots; `checkpoint()` returns a snapshot that later updates
    never mutate (LangGraph #8748 aliasing is avoided by construction).

    Constructors take LangGraph's arguments (the value type first: `LastValue(int)`, `Topic(str,
    accumulate=True)`); the key is set by the graph that owns the channel (`keyed`)."""

    __slots__ = ("key", "typ")

    key: str
    typ: Any

    # False when `update([])` can never change the channel, so the barrier's new-step
    # notification can skip it (unknown channel kinds are notified, to be safe).
    STEP_SENSITIVE: ClassVar[bool] = True

    @property
    def ValueType(self) -> Any:
        """The type of the channel's value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of one write to the channel."""
        return self.typ

    def new(self) -> Self:
        """An empty channel of the same kind, configuration and key."""
        raise NotImplementedError

    def keyed(self, key: str) -> Self:
        """An empty channel of the same kind, named `key` (a state key or a Pregel channel name)."""
        channel = self.new()
        channel.key = key
        return channel

    def for_annotation(self, key: str, base: Any) -> Self:
        """The channel of state key `key` declared as `Annotated[base, <this channel>]`."""
        return self.keyed(key)

    def from_checkpoint(self, value: Any) -> Self:
        channel = self.new()
        if type(value) is DeltaSnapshot:  # a DeltaChannel's, read by another graph (a namespace it names)
            value = value.value
        if value is not MISSING:
            channel._restore(value)
        return channel

    def copy(self) -> Self:
        """A channel holding the same value, which later updates of this one do not change."""
        return self.from_checkpoint(self.checkpoint())

    def _restore(self, value: Any) -> None:
        raise NotImplementedError

    def checkpoint(self) -> Any:
        raise NotImplementedError

    def stored(self) -> Any:
        """What a checkpoint saves for this channel (MISSING: nothing); `from_checkpoint` reads it back."""
        return self.checkpoint()

    def get(self) -> Any:
        raise NotImplementedError

    def is_available(self) -> bool:
        raise NotImplementedError

    def update(self, values: Sequence[Any]) -> bool:
        """Apply one superstep's writes; True if the channel changed (it then gets a new version)."""
        raise NotImplementedError

    def preview(self, values: Sequence[Any]) -> Any:
        """The value `update(values)` would produce, without changing this channel (MISSING if empty).
        Conditional edges see their own task's writes this way."""
        channel = self.copy()
        channel.update(values)
        return channel.get() if channel.is_available() else MISSING

    def consume(self) -> bool:
        """Called when a task triggered by this channel ran; True if the channel changed."""
        return False

    def finish(self) -> bool:
        """Called when the graph would otherwise go quiet; True if the channel changed."""
        return False


class SingleValueChannel(BaseChannel):
    """A channel that holds one value (MISSING while empty) and saves exactly that value."""

    __slots__ = ("value",)

    value: Any

    def __init__(self, typ: Any = Any, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.value = MISSING

    def new(self) -> Self:
        return type(self)(self.typ, self.key)

    def _restore(self, value: Any) -> None:
        self.value = value

    def checkpoint(self) -> Any:
        return self.value

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError(self.key)
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING
