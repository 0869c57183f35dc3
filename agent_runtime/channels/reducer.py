"""BinaryOperatorAggregate: an `Annotated[T, reducer]` key; writes are folded in task order."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Any, Self

from agent_runtime.channels.base import MISSING, SingleValueChannel
from agent_runtime.core.types import Overwrite
from agent_runtime.errors import InvalidUpdateError

OVERWRITE_KEY = "__overwrite__"


# Abstract collection types start as their concrete counterparts (LangGraph does the same), so the
# reducer also folds the first write in: Annotated[Sequence[str], add] starts as [].
_CONCRETE = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _initial(typ: Any) -> Any:
    """`T()` when it can be built (list() -> [], int() -> 0), else MISSING (first write is stored)."""
    origin = getattr(typ, "__origin__", typ)
    origin = _CONCRETE.get(origin, origin)
    try:
        return origin()
    except Exception:
        return MISSING


def get_overwrite(value: Any) -> tuple[bool, Any]:
    """(is it an overwrite, the value to write): an `Overwrite`, `{"__overwrite__": value}`, or an
    Overwrite that lost its class in JSON (`{"value": ..., "type": "__overwrite__"}`), as LangGraph."""
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE_KEY in value:
            return True, value[OVERWRITE_KEY]
        if value.get("type") == OVERWRITE_KEY and "value" in value:
            return True, value["value"]
    return False, None


class BinaryOperatorAggregate(SingleValueChannel):
    __slots__ = ("operator",)
    STEP_SENSITIVE = False

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any], key: str = "") -> None:
        self.key = key
        self.typ = typ
        self.operator = operator
        self.value = _initial(typ)

    def new(self) -> Self:
        return type(self)(self.typ, self.operator, self.key)

    def preview(self, values: Sequence[Any]) -> Any:
        if any(get_overwrite(v)[0] for v in values):
            return super().preview(values)
        value = self.value
        for item in values:
            value = item if value is MISSING else self.operator(value, item)
        return value

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        overwritten = False
        for value in values:
            is_overwrite, replacement = get_overwrite(value)
            if is_overwrite:
                if overwritten:
                    raise InvalidUpdateError(
                        f"At key '{self.key}': Can receive only one Overwrite value per super-step."
                    )
                self.value = replacement
                overwritten = True
            elif overwritten:
                continue
            elif self.value is MISSING:
                self.value = value
            else:
                self.value = self.operator(self.value, value)
        return True
