"""EphemeralValue: a value (or trigger signal) that lives for exactly one superstep."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from agent_runtime.channels.base import MISSING, SingleValueChannel
from agent_runtime.errors import InvalidUpdateError


class EphemeralValue(SingleValueChannel):
    __slots__ = ("guard",)

    def __init__(self, typ: Any = Any, guard: bool = True, *, key: str = "") -> None:
        super().__init__(typ, key)
        self.guard = guard

    def new(self) -> Self:
        return type(self)(self.typ, self.guard, key=self.key)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        if len(values) > 1 and self.guard:
            raise InvalidUpdateError(f"At key '{self.key}': EphemeralValue can receive only one value per step")
        self.value = values[-1]
        return True
