"""RunReport: what happened in a run (typed stop reason, supersteps, diagnostics, usage)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_runtime.core.types import Interrupt, StopReason


@dataclass
class RunReport:
    stop_reason: StopReason | None = None
    message: str = ""
    error: str | None = None
    steps: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # (superstep, nodes that ran)
    duplicate_runs: list[Any] = field(default_factory=list)  # lineage.DuplicateRun
    waiting_joins: list[Any] = field(default_factory=list)  # lineage.WaitingJoin
    guard_events: list[Any] = field(default_factory=list)  # detections and limit hits, in order
    interrupts: list[Interrupt] = field(default_factory=list)
    tokens: int = 0
    cost: float = 0.0
    retries: int = 0
    elapsed_s: float = 0.0

    def diagnostics(self) -> list[str]:
        """Human-readable topology findings of this run (empty when nothing surprising happened)."""
        return [str(d) for d in self.duplicate_runs] + [str(w) for w in self.waiting_joins]
