"""Node timeouts (`add_node(..., timeout=TimeoutPolicy(...))`): a watchdog around one attempt of an
async node. `run_timeout` caps the attempt's wall-clock time; `idle_timeout` the time since its last
progress (a stream write or `runtime.heartbeat()`; only the latter with refresh_on="heartbeat"). The
attempt is cancelled and fails with NodeTimeoutError, which the node's RetryPolicy sees."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Literal

from agent_runtime.errors import NodeTimeoutError
from agent_runtime.types import TimeoutPolicy


class _Attempt:
    __slots__ = ("last", "policy")

    def __init__(self, policy: TimeoutPolicy) -> None:
        self.policy = policy
        self.last = time.monotonic()


_ATTEMPT: ContextVar[_Attempt | None] = ContextVar("agent_runtime_timed_attempt", default=None)


def progress(kind: Literal["auto", "heartbeat"]) -> None:
    """Record progress of the running timed attempt (nothing outside one)."""
    attempt = _ATTEMPT.get()
    if attempt is not None and (kind == "heartbeat" or attempt.policy.refresh_on == "auto"):
        attempt.last = time.monotonic()


async def call_with_timeout(node: str, policy: TimeoutPolicy, start: Callable[[], Awaitable[Any]]) -> Any:
    """Await `start()` under `policy`; NodeTimeoutError (after cancelling it) when a limit passes."""
    attempt = _Attempt(policy)
    began = attempt.last
    token = _ATTEMPT.set(attempt)
    try:
        work = asyncio.ensure_future(start())  # the task copies this context, so it sees the attempt
    finally:
        _ATTEMPT.reset(token)
    run_timeout = policy.run_timeout
    idle_timeout = policy.idle_timeout
    assert run_timeout is None or isinstance(run_timeout, float)
    assert idle_timeout is None or isinstance(idle_timeout, float)
    try:
        while True:
            deadlines: list[tuple[float, Literal["idle", "run"]]] = []
            if run_timeout is not None:
                deadlines.append((began + run_timeout, "run"))
            if idle_timeout is not None:
                deadlines.append((attempt.last + idle_timeout, "idle"))
            deadline, kind = min(deadlines)
            done, _ = await asyncio.wait({work}, timeout=max(0.0, deadline - time.monotonic()))
            if done:
                return work.result()
            now = time.monotonic()
            if kind == "idle" and attempt.last + (idle_timeout or 0.0) > now:
                continue  # progress was made while waiting
            work.cancel()
            await asyncio.wait({work}, timeout=0.1)  # a node that ignores the cancellation is left behind
            raise NodeTimeoutError(node, now - began, kind=kind, idle_timeout=idle_timeout, run_timeout=run_timeout)
    finally:
        if not work.done():
            work.cancel()
