"""Events of timed attempts for an outside watcher (LangGraph's observer contract, which LangGraph
Server uses to kill a worker whose node ignored its timeout): a callable in
`configurable["__pregel_timed_attempt_observer"]` gets "start", "progress" (rate limited) and "finish"
of each attempt of a node that has a TimeoutPolicy. "finish" comes before any recovery (the retry's
wait, the error handler), so a watcher never sees a recovered attempt as hung."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

from agent_runtime.constants import CONF
from agent_runtime.core.protocol import CONFIG_KEY_TIMED_ATTEMPT_OBSERVER
from agent_runtime.core.types import TimeoutPolicy
from agent_runtime.errors import GraphBubbleUp

logger = logging.getLogger(__name__)


class AttemptContext(NamedTuple):
    """What every event of one attempt shares (built once, at its start)."""

    task_id: str
    task_name: str
    attempt: int
    run_id: str | None
    thread_id: str | None
    checkpoint_ns: str | None
    started_at: datetime
    run_timeout_secs: float | None
    idle_timeout_secs: float | None
    refresh_on: Literal["auto", "heartbeat"] | None


@dataclass(frozen=True, slots=True)
class AttemptEvent:
    context: AttemptContext
    event: Literal["start", "progress", "finish"]
    progress_at: datetime | None = None
    finished_at: datetime | None = None
    status: Literal["success", "error"] | None = None
    error_type: str | None = None
    error_message: str | None = None


Observer = Callable[[AttemptEvent], None]


def observer_of(config: Mapping[str, Any]) -> Observer | None:
    return config.get(CONF, {}).get(CONFIG_KEY_TIMED_ATTEMPT_OBSERVER)  # type: ignore[no-any-return]


def _dispatch(observer: Observer, event: AttemptEvent) -> None:
    try:
        observer(event)
    except Exception:
        logger.warning("Timed attempt observer failed", exc_info=True)


def start_attempt(
    observer: Observer, task_id: str, task_name: str, execution_info: Any, policy: TimeoutPolicy
) -> AttemptContext:
    """Tell the observer an attempt starts; `execution_info` is the attempt's (or None)."""
    idle = policy.idle_timeout
    assert idle is None or isinstance(idle, float)
    run = policy.run_timeout
    assert run is None or isinstance(run, float)
    context = AttemptContext(
        task_id=task_id,
        task_name=task_name,
        attempt=execution_info.node_attempt if execution_info is not None else 1,
        run_id=execution_info.run_id if execution_info is not None else None,
        thread_id=execution_info.thread_id if execution_info is not None else None,
        checkpoint_ns=execution_info.checkpoint_ns if execution_info is not None else None,
        started_at=datetime.now(UTC),
        run_timeout_secs=run,
        idle_timeout_secs=idle,
        refresh_on=policy.refresh_on if idle is not None else None,
    )
    _dispatch(observer, AttemptEvent(context, "start"))
    return context


def progress_reporter(observer: Observer, context: AttemptContext) -> Callable[[], None]:
    def report() -> None:
        _dispatch(observer, AttemptEvent(context, "progress", progress_at=datetime.now(UTC)))

    return report


def finish_attempt(observer: Observer, context: AttemptContext, error: BaseException | None = None) -> None:
    """The attempt ended; a pause (interrupt, Command to the parent) is not an error."""
    failed = error is not None and not isinstance(error, GraphBubbleUp)
    _dispatch(
        observer,
        AttemptEvent(
            context,
            "finish",
            finished_at=datetime.now(UTC),
            status="error" if failed else "success",
            error_type=type(error).__name__ if failed else None,
            error_message=str(error) if failed else None,
        ),
    )
