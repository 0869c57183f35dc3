"""A subgraph's run as the parent run that starts it sees it (engine/subgraphs.py): made by the
subgraph (`EngineGraph._new_run`), placed by the parent (nested, in its stream, on its replay and
starting checkpoint), streamed, and read for its outcome."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent_runtime.core.types import Interrupt
    from agent_runtime.engine.replay import ReplayBound
    from agent_runtime.engine.stream_event import Event


class SubgraphRun(Protocol):
    """engine/loop.py's Run, as its parent run sees it."""

    nested: bool
    subgraphs: bool
    stream_ns: tuple[str, ...]
    replay: ReplayBound | None
    start_from: Any
    parents: dict[str, str]
    status: str
    interrupts: list[Interrupt]

    def events_iter(self) -> AsyncGenerator[Event, None]: ...

    def output(self) -> Any: ...

    def _cp_config(self) -> dict[str, Any]: ...
