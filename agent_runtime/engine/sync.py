"""Running the engine's coroutines from sync code: each thread's reusable event loop, a helper thread
when a loop already runs there, and the process's pool for sync nodes."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_executor_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_local = threading.local()


def shared_executor() -> ThreadPoolExecutor:
    """Sync nodes of concurrent tasks run here; one pool for the process, created on first use."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=min(32, (os.cpu_count() or 1) + 8), thread_name_prefix="node")
        return _executor


def in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def on_own_loop() -> bool:
    """Whether the running event loop (if any) is this thread's own, which `run_sync` runs."""
    try:
        return asyncio.get_running_loop() is getattr(_local, "loop", None)
    except RuntimeError:
        return True


def thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's reusable event loop (a fresh loop per call would cost more than a superstep)."""
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
    return loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code; from inside a running loop, on a helper thread."""
    if not in_running_loop():
        return thread_loop().run_until_complete(coro)
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(run_sync(coro))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]
