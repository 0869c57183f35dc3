"""Stand-in for pytest-mock (not in our test extra): the part of `MockerFixture` LangGraph's tests use."""

from __future__ import annotations

from typing import Any
from unittest import mock

_STUB = True


class MockerFixture:
    Mock = mock.Mock
    MagicMock = mock.MagicMock
    AsyncMock = mock.AsyncMock
    ANY = mock.ANY
    call = mock.call
    sentinel = mock.sentinel

    def __init__(self) -> None:
        self._patches: list[Any] = []

    def _start(self, p: Any) -> Any:
        self._patches.append(p)
        return p.start()

    def patch(self, target: str, *args: Any, **kwargs: Any) -> Any:
        return self._start(mock.patch(target, *args, **kwargs))

    def spy(self, obj: Any, name: str) -> Any:
        return self._start(mock.patch.object(obj, name, wraps=getattr(obj, name)))

    def stopall(self) -> None:
        for p in reversed(self._patches):
            p.stop()
        self._patches.clear()
