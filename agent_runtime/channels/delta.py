"""DeltaChannel: a reducer channel whose reducer folds a whole batch of writes at once
(`reducer(state, [write, ...]) -> state`), as LangGraph's (beta) DeltaChannel.

LangGraph saves only the writes of such a channel and rebuilds its value by replaying them
(`replay_writes`), with a full snapshot every `snapshot_frequency` updates. agent_runtime's checkpoints
store each channel value once per version, so here a checkpoint keeps a `DeltaSnapshot` of the value
at every version the channel changed; `checkpoint()` still returns MISSING, as LangGraph's."""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Callable, Sequence
from typing import Any, NotRequired, Required, Self, get_args, get_origin

from agent_runtime.channels.base import MISSING, BaseChannel, DeltaSnapshot, EmptyChannelError
from agent_runtime.channels.reducer import get_overwrite
from agent_runtime.errors import InvalidUpdateError

_CONCRETE: dict[Any, type] = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _value_type(typ: Any) -> Any:
    """The type whose `typ()` is the empty value: qualifiers stripped, abstract collections concrete."""
    while get_origin(typ) in (Required, NotRequired):
        typ = get_args(typ)[0]
    return _CONCRETE.get(typ, typ)


class DeltaChannel(BaseChannel):
    """`reducer(state, writes)` must be batching-invariant:
    `reducer(reducer(s, xs), ys) == reducer(s, xs + ys)`. `Overwrite(value)` replaces the value."""

    __slots__ = ("reducer", "snapshot_frequency", "value")
    STEP_SENSITIVE = False

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: Any = None,
        *,
        snapshot_frequency: int = 100,
        key: str = "",
    ) -> None:
        if snapshot_frequency <= 0:
            raise ValueError(f"snapshot_frequency must be a positive int, got {snapshot_frequency}")
        self.reducer = reducer
        self.typ = list if typ is None else _value_type(typ)
        self.snapshot_frequency = snapshot_frequency
        self.key = key
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and self.reducer == other.reducer
            and self.snapshot_frequency == other.snapshot_frequency
        )

    __hash__ = None  # type: ignore[assignment]

    def _empty(self) -> Self:
        return type(self)(self.reducer, self.typ, snapshot_frequency=self.snapshot_frequency, key=self.key)

    def new(self) -> Self:
        """A fresh channel starts as `typ()` (an empty list / dict), as LangGraph's."""
        return self.from_checkpoint(MISSING)

    def for_annotation(self, key: str, base: Any) -> Self:
        """`Annotated[dict[str, str], DeltaChannel(merge)]`: the value type is the annotated one."""
        channel = type(self)(self.reducer, base, snapshot_frequency=self.snapshot_frequency, key=key)
        return channel.new()

    def from_checkpoint(self, value: Any) -> Self:
        """MISSING or None: empty (`typ()`); a DeltaSnapshot: its value; any other value: a seed."""
        channel = self._empty()
        if value is MISSING or value is None:
            channel.value = self.typ()
        elif isinstance(value, DeltaSnapshot):
            channel.value = value.value
        else:
            channel.value = value
        return channel

    def copy(self) -> Self:
        channel = self._empty()
        channel.value = self.value if self.value is MISSING else copy.copy(self.value)
        return channel

    def checkpoint(self) -> Any:
        return MISSING

    def stored(self) -> Any:
        return MISSING if self.value is MISSING else DeltaSnapshot(copy.copy(self.value))

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Apply saved writes `(task_id, channel, value)`, oldest first, in one reducer call; the last
        Overwrite among them is the new base."""
        values = [value for _, _, value in writes]
        if not values:
            return
        base, start = self.value, 0
        for index, value in enumerate(values):
            is_overwrite, replacement = get_overwrite(value)
            if is_overwrite:
                base, start = self._overwritten(replacement), index + 1
        rest = values[start:]
        self.value = self.reducer(base, rest) if rest else base

    def _overwritten(self, replacement: Any) -> Any:
        return self.typ() if replacement is None else copy.copy(replacement)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        overwrites = [replacement for is_ow, replacement in map(get_overwrite, values) if is_ow]
        if len(overwrites) > 1:
            raise InvalidUpdateError(f"At key '{self.key}': can receive only one Overwrite value per super-step.")
        if overwrites:
            self.value = self._overwritten(overwrites[0])
            return True
        base = self.typ() if self.value is MISSING else self.value
        self.value = self.reducer(base, list(values))
        return True

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError(self.key)
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING
