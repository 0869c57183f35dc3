"""ValuesTransformer: `run.values`, the run's state after each step (its own scope only: the scope
is the caller's checkpoint namespace, so a v3 stream opened inside a node sees its own graph)."""

from __future__ import annotations

from agent_runtime.stream.outcome import ValuesOutcome
from agent_runtime.stream.protocol import ProtocolEvent
from agent_runtime.stream.transformers.scoped import ScopedModeTransformer


class ValuesTransformer(ScopedModeTransformer, ValuesOutcome):
    mode = "values"

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._reset_outcome()

    @property
    def error(self) -> BaseException | None:
        """The error the run ended with (the mux fails the projection with it), or None."""
        return self._log._error

    def _accept(self, event: ProtocolEvent) -> None:
        self._track_values(event["params"])
        self._log.push(event["params"]["data"])
