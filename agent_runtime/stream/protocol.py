"""The v3 streaming protocol's two building blocks: `ProtocolEvent`, the envelope every raw stream
part travels in through a `StreamMux`, and `StreamTransformer`, the extension point that turns those
events into projections (`run.values`, `run.lifecycle`, a user's own channels). As LangGraph's
`langgraph.stream._types`."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal, NotRequired

from typing_extensions import TypedDict

_logger = logging.getLogger(__name__)
_ASYNC_HOOKS = ("aprocess", "afinalize", "afail")


class ProtocolEventParams(TypedDict):
    """`timestamp` is wall-clock milliseconds (not monotonic: order by the event's `seq`)."""

    namespace: list[str]
    timestamp: int
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One stream part (`method` is its stream mode, or a channel's name) in the protocol envelope;
    the root mux numbers the events of its log with `seq`."""

    type: Literal["event"]
    event_id: NotRequired[str]
    seq: NotRequired[int]
    method: str
    params: ProtocolEventParams


class StreamTransformer(ABC):
    """Observes a mux's events and builds projections from them (`init()` returns them by name).

    A transformer runs on the sync lane (`process`) unless it needs the async one: it overrides
    `aprocess` / `afinalize` / `afail`, calls `schedule()`, or sets `requires_async`; such a
    transformer cannot be registered for a sync run unless it sets `supports_sync`.
    `required_stream_modes` are the graph stream modes it consumes (a v3 run asks the graph for the
    union over its transformers); `before_builtins` registers it ahead of the built-in transformers
    (for transformers that rewrite events before the built-ins copy them). The StreamChannels of the
    projection are closed / failed by the mux when the run ends.
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projection: its keys become `run.extensions` (and attributes, for `_native` ones)."""

    def _on_register(self, mux: Any) -> None:  # noqa: B027 (an optional hook)
        """Called once the mux has wired the projection in (SubgraphTransformer keeps the mux)."""

    def process(self, event: ProtocolEvent) -> bool:
        """Observe an event (sync lane); False keeps it out of the mux's main log."""
        raise NotImplementedError(f"{type(self).__name__} must override process() or aprocess()")

    async def aprocess(self, event: ProtocolEvent) -> bool:
        """Observe an event (async lane); the next transformer waits for it."""
        return self.process(event)

    def finalize(self) -> None:  # noqa: B027 (an optional hook)
        """The run ended normally."""

    async def afinalize(self) -> None:
        """The run ended normally (async lane, after every scheduled task finished)."""
        self.finalize()

    def fail(self, err: BaseException) -> None:  # noqa: B027 (an optional hook)
        """The run ended with `err`."""

    async def afail(self, err: BaseException) -> None:
        """The run ended with `err` (async lane, after the scheduled tasks were cancelled)."""
        self.fail(err)

    def schedule(
        self, coro: Coroutine[Any, Any, Any], *, on_error: Literal["log", "raise"] = "log"
    ) -> asyncio.Task[Any]:
        """Run `coro` as part of this transformer's lifecycle: the mux awaits it before `afinalize`
        and cancels it on `afail`. `on_error="raise"` turns its failure into the run's failure."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop; this transformer must "
                "run under astream(), not stream(). Set requires_async=True on the class so this fails "
                "at registration rather than at first event."
            ) from None
        task = asyncio.create_task(_logged(coro) if on_error == "log" else coro)
        pending = self.scheduled_tasks()
        pending.add(task)
        task.add_done_callback(pending.discard)
        return task

    def scheduled_tasks(self) -> set[asyncio.Task[Any]]:
        """The tasks `schedule()` started and that have not finished (created lazily: subclasses need
        not call `super().__init__()`)."""
        tasks: set[asyncio.Task[Any]] | None = self.__dict__.get("_stream_scheduled_tasks")
        if tasks is None:
            tasks = self.__dict__["_stream_scheduled_tasks"] = set()
        return tasks


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    """A scheduled coroutine whose failure is logged, not raised (one failure does not end the run)."""
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:
        _logger.exception("Scheduled StreamTransformer task failed")


def transformer_requires_async(transformer: StreamTransformer) -> bool:
    """Whether `transformer` needs a running event loop (the async lane)."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    return any(getattr(cls, hook) is not getattr(StreamTransformer, hook) for hook in _ASYNC_HOOKS)
