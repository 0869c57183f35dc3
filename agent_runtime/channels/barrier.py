"""NamedBarrierValue: the AND-join of `add_edge([a, b], c)`; available once every name arrived."""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any, Self

from agent_runtime.channels.base import MISSING, BaseChannel, EmptyChannelError
from agent_runtime.errors import InvalidUpdateError


class NamedBarrierValue(BaseChannel):
    __slots__ = ("names", "seen")
    STEP_SENSITIVE = False

    def __init__(self, typ: Any = Any, names: Set[str] = frozenset(), *, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.names = frozenset(names)
        self.seen: set[str] = set()

    def new(self) -> Self:
        return type(self)(self.typ, self.names, key=self.key)

    def _restore(self, value: Any) -> None:
        self.seen = set(value)

    def checkpoint(self) -> Any:
        # A frozen copy: the live set keeps changing in later supersteps (LangGraph #8748).
        return frozenset(self.seen) if self.seen else MISSING

    def get(self) -> None:
        if self.seen != self.names:
            raise EmptyChannelError(self.key)
        return None

    def is_available(self) -> bool:
        return self.seen == self.names

    def update(self, values: Sequence[Any]) -> bool:
        changed = False
        for name in values:
            if name not in self.names:
                raise InvalidUpdateError(f"At key '{self.key}': value '{name}' is not in {sorted(self.names)}")
            if name not in self.seen:
                self.seen.add(name)
                changed = True
        return changed

    def consume(self) -> bool:
        if self.seen == self.names:
            self.seen = set()
            return True
        return False


class NamedBarrierValueAfterFinish(NamedBarrierValue):
    """The join of a deferred node: complete AND the graph went quiet."""

    __slots__ = ("finished",)

    def __init__(self, typ: Any = Any, names: Set[str] = frozenset(), *, key: str = "") -> None:
        super().__init__(typ, names, key=key)
        self.finished = False

    def _restore(self, value: Any) -> None:
        seen, self.finished = value
        self.seen = set(seen)

    def checkpoint(self) -> Any:
        return (frozenset(self.seen), self.finished) if self.seen else MISSING

    def get(self) -> None:
        if not self.is_available():
            raise EmptyChannelError(self.key)
        return None

    def is_available(self) -> bool:
        return self.finished and self.seen == self.names

    def consume(self) -> bool:
        if self.finished and self.seen == self.names:
            self.seen = set()
            self.finished = False
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.seen == self.names:
            self.finished = True
            return True
        return False
