"""Topic: a list of values written in one superstep (the pending-Send queue uses accumulate=False)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from agent_runtime.channels.base import MISSING, BaseChannel, EmptyChannelError


class Topic(BaseChannel):
    __slots__ = ("accumulate", "values")

    def __init__(self, typ: Any = Any, accumulate: bool = False, *, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.accumulate = accumulate
        self.values: list[Any] = []

    @property
    def ValueType(self) -> Any:
        typ = self.typ
        return Sequence[typ]  # type: ignore[valid-type]

    @property
    def UpdateType(self) -> Any:
        typ = self.typ
        return typ | list[typ]  # type: ignore[valid-type]

    def new(self) -> Self:
        return type(self)(self.typ, self.accumulate, key=self.key)

    def _restore(self, value: Any) -> None:
        self.values = list(value)

    def checkpoint(self) -> Any:
        return list(self.values) if self.values else MISSING

    def get(self) -> list[Any]:
        if not self.values:
            raise EmptyChannelError(self.key)
        return list(self.values)

    def is_available(self) -> bool:
        return bool(self.values)

    def update(self, values: Sequence[Any]) -> bool:
        changed = False
        if not self.accumulate:
            changed = bool(self.values)
            self.values = []
        for value in values:
            if isinstance(value, list):
                self.values.extend(value)
            else:
                self.values.append(value)
            changed = True
        return changed
