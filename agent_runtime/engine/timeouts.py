"""Node timeouts (`add_node(..., timeout=TimeoutPolicy(...))`): a watchdog around one attempt of an
async node. `run_timeout` caps the attempt's wall-clock time; `idle_timeout` the time since its last
progress (a write, a stream chunk, a task call, a LangChain callback event or `runtime.heartbeat()`;
only the latter with refresh_on="heartbeat"). The attempt is cancelled and fails with
NodeTimeoutError, which the node's RetryPolicy sees. Once the attempt timed out its scope is closed:
what the cancelled work still writes or streams is dropped, and it cannot start task calls."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from contextvars import ContextVar
from typing import Any, Literal

from agent_runtime.core.protocol import StreamChunk, StreamProtocol
from agent_runtime.core.types import TimeoutPolicy
from agent_runtime.errors import NodeTimeoutError


def sync_timeout_unsupported(name: str, kind: Literal["Node", "Task"] = "Node") -> ValueError:
    """The error of a timeout given to a sync function: sync Python cannot be cancelled in-process."""
    return ValueError(
        "Node timeouts are only supported for async nodes because sync Python execution cannot be "
        f"safely cancelled in-process. {kind} {name!r} is sync."
    )


class TimedAttemptScope:
    """The progress clock of one timed attempt, and the gate its side effects pass while it is open.
    Writes are serialized with `close()` (a cancelled attempt cannot persist one after its timeout);
    stream chunks and task calls are checked without the lock (they come from the event loop)."""

    __slots__ = (
        "__weakref__",
        "_active",
        "_last_progress",
        "_last_progress_emit",
        "_lock",
        "_on_progress",
        "_progress_min_interval",
        "_refresh_on",
    )

    def __init__(
        self,
        on_progress: Callable[[], None] | None = None,
        progress_min_interval: float = 0.0,
        refresh_on: Literal["auto", "heartbeat"] | None = None,
    ) -> None:
        self._active = True
        self._last_progress = time.monotonic()
        self._lock = threading.Lock()
        self._on_progress = on_progress  # tells an observer (rate limited to one per interval)
        self._progress_min_interval = progress_min_interval
        self._refresh_on = refresh_on  # None: no idle timeout
        self._last_progress_emit = float("-inf")

    @property
    def refresh_on(self) -> Literal["auto", "heartbeat"] | None:
        return self._refresh_on

    def touch(self) -> None:
        """Progress (lock-free: idle timeouts are coarse next to this race)."""
        now = time.monotonic()
        self._last_progress = now
        if self._on_progress is not None and now - self._last_progress_emit >= self._progress_min_interval:
            self._last_progress_emit = now
            self._on_progress()

    def progress(self, kind: Literal["auto", "heartbeat"]) -> None:
        """Progress of `kind`: a heartbeat always counts, anything else only with refresh_on="auto"."""
        if kind == "heartbeat" or self._refresh_on == "auto":
            self.touch()

    def close(self) -> None:
        with self._lock:
            self._active = False

    async def wait_for_idle_timeout(self, idle_timeout_s: float) -> None:
        """Return once closed; raise asyncio.TimeoutError after `idle_timeout_s` without progress."""
        while True:
            with self._lock:
                if not self._active:
                    return
                remaining = self._last_progress + idle_timeout_s - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            await asyncio.sleep(remaining)

    def _guard_send(
        self, send: Callable[[Sequence[tuple[str, Any]]], None]
    ) -> Callable[[Sequence[tuple[str, Any]]], None]:
        def guarded_send(writes: Sequence[tuple[str, Any]]) -> None:
            with self._lock:
                if self._active:
                    if writes and self._refresh_on == "auto":
                        self._last_progress = time.monotonic()
                    send(writes)

        return guarded_send

    def _guard_stream(self, stream: StreamProtocol) -> StreamProtocol:
        def guarded_stream(chunk: StreamChunk) -> None:
            if not self._active:
                return
            if self._refresh_on == "auto":
                self._last_progress = time.monotonic()
            stream(chunk)

        return StreamProtocol(guarded_stream, stream.modes)

    def _guard_call(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def guarded_call(*args: Any, **kwargs: Any) -> Any:
            if not self._active:
                raise asyncio.CancelledError
            if self._refresh_on == "auto":
                self._last_progress = time.monotonic()
            return call(*args, **kwargs)

        return guarded_call

    def _guard_stream_writer(self, stream_writer: Callable[[Any], None]) -> Callable[[Any], None]:
        def guarded_stream_writer(chunk: Any) -> None:
            with self._lock:
                if not self._active:
                    return
                if self._refresh_on == "auto":
                    self._last_progress = time.monotonic()
            stream_writer(chunk)  # outside the lock: it runs arbitrary code

        return guarded_stream_writer


_SCOPE: ContextVar[TimedAttemptScope | None] = ContextVar("agent_runtime_timed_attempt", default=None)


def progress(kind: Literal["auto", "heartbeat"]) -> None:
    """Record progress of the running timed attempt (nothing outside one)."""
    scope = _SCOPE.get()
    if scope is not None:
        scope.progress(kind)


def new_scope(policy: TimeoutPolicy, on_progress: Callable[[], None] | None = None) -> TimedAttemptScope:
    idle = policy.idle_timeout
    assert idle is None or isinstance(idle, float)
    return TimedAttemptScope(
        on_progress if idle is not None else None,
        progress_min_interval=idle / 4 if idle is not None else 0.0,  # ~4 progress events per idle window
        refresh_on=policy.refresh_on if idle is not None else None,
    )


async def _run_deadline(run_timeout_s: float) -> None:
    await asyncio.sleep(run_timeout_s)
    raise TimeoutError


def _drain_cancelled(task: asyncio.Future[Any]) -> None:
    with suppress(asyncio.CancelledError, Exception):
        task.exception()  # retrieved: asyncio does not log the abandoned attempt's outcome


async def run_timed(
    node: str,
    policy: TimeoutPolicy,
    scope: TimedAttemptScope,
    start: Callable[[], Awaitable[Any]],
    on_timeout: Callable[[], None] | None = None,
) -> Any:
    """Await `start()` (in a task that sees `scope` as the current attempt) under `policy`. When a
    limit passes first: close the scope, call `on_timeout`, cancel the work (without waiting for it)
    and raise NodeTimeoutError. An error the work raises itself (a TimeoutError too) goes through."""
    run_timeout_s = policy.run_timeout
    idle_timeout_s = policy.idle_timeout
    assert run_timeout_s is None or isinstance(run_timeout_s, float)
    assert idle_timeout_s is None or isinstance(idle_timeout_s, float)
    token = _SCOPE.set(scope)
    try:
        work = asyncio.ensure_future(start())  # the task copies this context, so it sees the scope
    finally:
        _SCOPE.reset(token)
    watchdogs: dict[asyncio.Future[None], Literal["idle", "run"]] = {}
    if idle_timeout_s is not None:
        watchdogs[asyncio.ensure_future(scope.wait_for_idle_timeout(idle_timeout_s))] = "idle"
    if run_timeout_s is not None:
        watchdogs[asyncio.ensure_future(_run_deadline(run_timeout_s))] = "run"
    began = time.monotonic()
    try:
        done, _ = await asyncio.wait({work, *watchdogs}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:  # in time (a watchdog may have fired in the same moment: the result wins)
            return work.result()
        kind = next(watchdogs[w] for w in done)
        scope.close()
        if on_timeout is not None:
            on_timeout()
        work.cancel()
        work.add_done_callback(_drain_cancelled)
        raise NodeTimeoutError(
            node, time.monotonic() - began, kind=kind, idle_timeout=idle_timeout_s, run_timeout=run_timeout_s
        )
    except asyncio.CancelledError:
        work.cancel()
        work.add_done_callback(_drain_cancelled)
        raise
    finally:
        scope.close()
        for watchdog in watchdogs:
            watchdog.cancel()
            watchdog.add_done_callback(_drain_cancelled)
