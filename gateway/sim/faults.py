"""Fault injection: by header `x-sim-fault`, by directive, from a queue, or at random per model."""

from __future__ import annotations

import asyncio
import math
import random
from collections import deque

from gateway.sim.errors import ErrorKind, SimError
from gateway.sim.settings import FaultKind, SimSettings

FAULT_HEADER = "x-sim-fault"

# Faults that happen inside an otherwise successful (streamed) response rather than as an error.
MID_STREAM_FAULTS = frozenset({FaultKind.MALFORMED_STREAM, FaultKind.DISCONNECT})


class FaultInjector:
    """Decides which fault, if any, hits a request."""

    def __init__(self, settings: SimSettings) -> None:
        self._settings = settings
        self._random = random.Random(settings.fault_seed)
        self._queue: deque[tuple[FaultKind, str | None]] = deque()

    def enqueue(self, faults: list[FaultKind], model: str | None = None) -> None:
        """The next requests (for `model`, or any model) fail with these faults, in order."""
        self._queue.extend((fault, model) for fault in faults)

    def clear(self) -> None:
        self._queue.clear()

    def choose(self, model: str, header: str | None, directive: FaultKind | None) -> FaultKind | None:
        known = {fault.value for fault in FaultKind}
        if header is not None and header in known:  # unknown values are ignored, like any unknown header
            return FaultKind(header)
        if directive is not None:
            return directive
        for queued in self._queue:
            if queued[1] in (None, model):
                self._queue.remove(queued)
                return queued[0]
        rates = self._settings.fault_rates.get(model) or self._settings.fault_rates.get("*") or {}
        draw = self._random.random()
        for fault, probability in rates.items():
            if draw < probability:
                return fault
            draw -= probability
        return None


async def raise_error_fault(fault: FaultKind, settings: SimSettings) -> None:
    """Raise the provider error for `fault`; mid-stream faults are left to the response writer."""
    if fault is FaultKind.RATE_LIMIT:
        headers = {
            "retry-after": str(math.ceil(settings.retry_after_s)),
            "retry-after-ms": str(int(settings.retry_after_s * 1000)),
        }
        raise SimError(
            429,
            ErrorKind.RATE_LIMIT,
            "Rate limit reached for requests (simulated).",
            code="rate_limit_exceeded",
            headers=headers,
        )
    if fault is FaultKind.SERVER_ERROR:
        # A provider's 500 comes after it began the work: its base time to first token (0 unless realistic).
        await asyncio.sleep(settings.latency.base_ttft_s * settings.latency.scale)
        raise SimError(500, ErrorKind.SERVER, "The server had an error while processing your request (simulated).")
    if fault is FaultKind.OVERLOADED:
        raise SimError(529, ErrorKind.OVERLOADED, "Overloaded")
    if fault is FaultKind.TIMEOUT:
        # Stall past any sane client timeout; a client that waits this long gets a 504.
        await asyncio.sleep(settings.timeout_fault_s)
        raise SimError(504, ErrorKind.TIMEOUT, "Request timed out (simulated).")


class SimulatedDisconnect(Exception):
    """Raised inside a response body so that the server drops the connection mid-response."""
