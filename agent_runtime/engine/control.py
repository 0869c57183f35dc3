"""RunControl: a caller's handle to stop a run between supersteps."""

from __future__ import annotations


class RunControl:
    """Cooperative stop of one run (`invoke(..., control=RunControl())`): after `request_drain()`,
    from any thread or from a node, the run starts no further superstep; it saves its checkpoint and
    raises GraphDrained, and invoking the thread again goes on from there. A run whose work is done
    finishes normally. One control per run: a drained control stays drained."""

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None  # one attribute write: safe from any thread

    def request_drain(self, reason: str = "shutdown") -> None:
        self._drain_reason = reason

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason
