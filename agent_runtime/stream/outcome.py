"""What a run's own "values" events tell about its end: the latest state and the interrupts. Tracked
by the run streams (so `run.output` / `interrupted` / `interrupts` work without ValuesTransformer)
and by ValuesTransformer."""

from __future__ import annotations

from typing import Any

from agent_runtime.stream.protocol import ProtocolEventParams


class ValuesOutcome:
    _latest: dict[str, Any] | None
    _interrupted: bool
    _interrupts: list[Any]

    def _reset_outcome(self) -> None:
        self._latest = None
        self._interrupted = False
        self._interrupts = []

    def _track_values(self, params: ProtocolEventParams) -> None:
        """A values event of the run's own level: its state, and the interrupts it carries."""
        self._latest = params["data"]
        interrupts = params.get("interrupts", ())
        if interrupts:
            self._interrupted = True
            self._interrupts.extend(interrupts)
