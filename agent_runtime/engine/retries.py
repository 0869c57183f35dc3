"""Retrying a failed node (`add_node(..., retry_policy=RetryPolicy(...))`), as LangGraph does: the
first policy whose `retry_on` matches the error decides; a task that failed `max_attempts` times, or
whose error no policy matches, fails. The wait grows by `backoff_factor` up to `max_interval`, plus a
random second with `jitter`. A sync node waits with `time.sleep` on a pool thread (its own kind of
wait, which tests patch), an async one with `asyncio.sleep`."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import cast

from agent_runtime.core.types import RetryPolicy


def should_retry_on(policy: RetryPolicy, exc: Exception) -> bool:
    """Whether `policy` retries `exc`: `retry_on` is an exception class, a sequence of them, or a
    predicate."""
    retry_on = policy.retry_on
    if isinstance(retry_on, Sequence):
        return isinstance(exc, tuple(retry_on))
    if isinstance(retry_on, type) and issubclass(retry_on, Exception):
        return isinstance(exc, retry_on)
    if callable(retry_on):
        return bool(cast(Callable[[Exception], bool], retry_on)(exc))
    raise TypeError("retry_on must be an Exception class, a list or tuple of Exception classes, or a callable")


def retry_delay(policies: Sequence[RetryPolicy], exc: Exception, attempts: int) -> float | None:
    """Seconds to wait before re-running a task that failed `attempts` times; None: do not retry."""
    policy = next((p for p in policies if should_retry_on(p, exc)), None)
    if policy is None or attempts >= policy.max_attempts:
        return None
    interval = min(policy.max_interval, policy.initial_interval * policy.backoff_factor ** (attempts - 1))
    return interval + random.uniform(0, 1) if policy.jitter else interval


async def wait_before_retry(delay: float, is_async: bool, executor: Executor | None) -> None:
    if is_async or executor is None:
        await asyncio.sleep(delay)
    else:
        await asyncio.get_running_loop().run_in_executor(executor, time.sleep, delay)


def cancelled_by_node() -> bool:
    """Whether the CancelledError being handled was raised by the node's own code: nobody asked to
    cancel the running asyncio task."""
    current = asyncio.current_task()
    return current is not None and current.cancelling() == 0
