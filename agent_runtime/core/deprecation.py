"""LangGraph's deprecation warnings, with its categories and messages: the old spellings it still
takes (`retry=`, `input=`, `config_schema=`, `checkpoint_during=`, ...) work here too, and warn as
LangGraph does, so code moving over from LangGraph sees the same notices."""

from __future__ import annotations

import warnings
from collections.abc import MutableMapping
from typing import Any

__all__ = (
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
    "renamed_argument",
)


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated LangGraph API: `since` the version that deprecated it, `expected_removal` the one
    expected to remove it (the next major by default)."""

    def __init__(
        self, message: str, *args: object, since: tuple[int, int], expected_removal: tuple[int, int] | None = None
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal if expected_removal is not None else (since[0] + 1, 0)

    def __str__(self) -> str:
        since = ".".join(map(str, self.since))
        removal = ".".join(map(str, self.expected_removal))
        return f"{self.message}. Deprecated in LangGraph V{since} to be removed in V{removal}."


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def checkpoint_during(kwargs: MutableMapping[str, Any], durability: str | None) -> str | None:
    """`durability`, or what the deprecated `checkpoint_during=` (popped from `kwargs`) meant: True a
    checkpoint after each step saved in the background ("async"), False only at exit ("exit")."""
    if "checkpoint_during" not in kwargs:
        return durability
    during = kwargs.pop("checkpoint_during")
    warnings.warn(
        "`checkpoint_during` is deprecated and will be removed. Please use `durability` instead.",
        LangGraphDeprecatedSinceV10,
        stacklevel=3,
    )
    return durability or ("async" if during else "exit")


def renamed_argument(
    kwargs: MutableMapping[str, Any],
    old: str,
    new: str,
    current: Any,
    category: type[LangGraphDeprecationWarning] = LangGraphDeprecatedSinceV05,
) -> Any:
    """The value of an argument renamed from `old` to `new`: `current` (given as `new`) unless `old`
    was given instead (popped from `kwargs`, with LangGraph's warning)."""
    if old not in kwargs:
        return current
    value = kwargs.pop(old)
    warnings.warn(f"`{old}` is deprecated and will be removed. Please use `{new}` instead.", category, stacklevel=3)
    return value if current is None else current
