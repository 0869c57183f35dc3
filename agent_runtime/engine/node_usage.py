"""What a running node reports about itself (`report_usage()`, `record_action()`): the usage counted
against the run's budget and the actions its loop detection sees (engine/guard_rails.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_runtime.engine.algo import Task


@dataclass(slots=True)
class StepAction:
    """A normalised action a node reports for loop detection (e.g. a tool call and its result)."""

    tool: str
    args: Any
    result: Any
    error: bool = False
    text: str | None = None


class NodeUsage(Protocol):
    """One task attempt's reports (engine/context.py's TaskScratch, as the guard reads it)."""

    @property
    def task(self) -> Task: ...

    @property
    def tokens(self) -> int: ...

    @property
    def cost(self) -> float: ...

    @property
    def actions(self) -> Sequence[StepAction]: ...
