"""LastValue: a plain state key; at most one write per superstep."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from agent_runtime.channels.base import MISSING, BaseChannel, EmptyChannelError, SingleValueChannel
from agent_runtime.errors import InvalidUpdateError


class LastValue(SingleValueChannel):
    __slots__ = ()
    STEP_SENSITIVE = False

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': can receive only one value per step; {len(values)} tasks wrote it "
                "in the same superstep. Use an Annotated key with a reducer to accept several values."
            )
        self.value = values[-1]
        return True

    def preview(self, values: Sequence[Any]) -> Any:
        if len(values) > 1:
            self.update(values)  # raises the conflict error
        return values[-1] if values else self.value


class LastValueAfterFinish(BaseChannel):
    """Trigger of a deferred node: armed by writes, available only once the graph went quiet."""

    __slots__ = ("finished", "value")
    STEP_SENSITIVE = False

    def __init__(self, typ: Any = Any, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.value: Any = MISSING
        self.finished = False

    def new(self) -> Self:
        return type(self)(self.typ, self.key)

    def _restore(self, value: Any) -> None:
        self.value, self.finished = value

    def checkpoint(self) -> Any:
        return MISSING if self.value is MISSING else (self.value, self.finished)

    def get(self) -> Any:
        if self.value is MISSING or not self.finished:
            raise EmptyChannelError(self.key)
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING and self.finished

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.value = values[-1]
        self.finished = False
        return True

    def consume(self) -> bool:
        if self.finished:
            self.value = MISSING
            self.finished = False
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False
