"""ValuesTransformer: `run.values`, the run's state after each step (its own scope only: the scope
is the caller's checkpoint namespace, so a v3 stream opened inside a node sees its own graph)."""

from __future__ import annotations

from typing import Any

from agent_runtime.stream.protocol import ProtocolEvent
from agent_runtime.stream.transformers.scoped import ScopedModeTransformer


class ValuesTransformer(ScopedModeTransformer):
    mode = "values"

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """The error the run ended with (the mux fails the projection with it), or None."""
        return self._log._error

    def _accept(self, event: ProtocolEvent) -> None:
        params = event["params"]
        self._latest = params["data"]
        interrupts = params.get("interrupts", ())
        if interrupts:
            self._interrupted = True
            self._interrupts.extend(interrupts)
        self._log.push(params["data"])
