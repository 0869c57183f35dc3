"""StreamMux: routes a run's protocol events through its transformers into the main event log, and
owns the projections they build (LangGraph's `langgraph.stream._mux.StreamMux`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer, transformer_requires_async

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]
"""Builds a transformer for a mux's scope: `factory(scope)` (a transformer class is one)."""


class StreamMux:
    """The event dispatcher of one scope (the root run, or a subgraph handle's mini-mux).

    Transformers see each event in registration order (`before_builtins` ones first); an event any of
    them rejects stays out of the main log. Named StreamChannels of the projections forward their
    pushes to the main log as events of their own (`<name>` for a `_native` transformer's,
    `custom:<name>` otherwise). Only the root mux numbers its log's events (`seq`); child muxes share
    the parent's event objects unchanged.
    """

    def __init__(
        self,
        transformers: list[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: list[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        self.is_async = is_async
        self.scope = scope
        self._assign_seq = _assign_seq
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self._seq = 0
        self._push_seq = 0
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._projection_owners: dict[str, str] = {}
        self._transformer_by_key: dict[str, StreamTransformer] = {}
        # only factories can build a fresh pipeline for a subgraph's scope (`_make_child`)
        self._factories = list(factories) if factories is not None else None
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        # factory-built transformers first (they propagate to child scopes), then the root-only instances
        for transformer in _builtins_last(factory(scope) for factory in factories or ()):
            self._register(transformer)
        for transformer in _builtins_last(transformers or ()):
            self._register(transformer)

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        """The transformer whose projection has `key`."""
        return self._transformer_by_key.get(key)

    def required_stream_modes(self) -> set[str]:
        """The graph stream modes the registered transformers consume (what a v3 run asks for)."""
        return {mode for t in self._transformers for mode in getattr(t, "required_stream_modes", ())}

    def _next_push_seq(self) -> int:
        self._push_seq += 1
        return self._push_seq

    # -- registration ----------------------------------------------------------------------------------
    def _register(self, transformer: StreamTransformer) -> None:
        if transformer_requires_async(transformer) and not self.is_async:
            raise RuntimeError(
                f"{type(transformer).__name__} requires an async run — it overrides aprocess/afinalize/afail "
                "or sets requires_async=True. Use astream(), not stream()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(f"StreamTransformer.init() must return a dict, got {type(projection).__name__}")
        conflicts = sorted(set(projection) & set(self.extensions))
        if conflicts:
            owners = ", ".join(f"{key!r} (owned by {self._projection_owners[key]})" for key in conflicts)
            raise ValueError(
                f"Transformer {type(transformer).__name__} returned projection keys that conflict with "
                f"already-registered keys: {owners}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if isinstance(value, StreamChannel):
                self._adopt(value, native)
        self.extensions.update(projection)
        for key in projection:
            self._projection_owners[key] = type(transformer).__name__
            self._transformer_by_key[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt(self, channel: StreamChannel[Any], native: bool) -> None:
        """Bind a projection's channel to this mux's lane; a named one forwards to the main log."""
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(lambda item: self._forward(method, item))

    # -- pumps and child scopes ------------------------------------------------------------------------
    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Let every cursor of this mux (and of the child muxes made later) drive the run with `fn`."""
        self._pump_fn = fn
        self._events._request_more = fn
        for channel in self._channels:
            channel._request_more = fn
        for transformer in self._transformers:
            bind = getattr(transformer, "_bind_pump", None)
            if bind is not None:
                bind(fn)

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn
        self._events._arequest_more = fn
        for channel in self._channels:
            channel._arequest_more = fn
        for transformer in self._transformers:
            bind = getattr(transformer, "_bind_apump", None)
            if bind is not None:
                bind(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mini-mux for a subgraph: fresh transformers from the same factories, the same pumps."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux._make_child requires the mux to be constructed with `factories=`; pre-built "
                "transformers can't be cloned to a new scope."
            )
        child = StreamMux(factories=self._factories, is_async=self.is_async, scope=scope, _assign_seq=False)
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    # -- sync lane -------------------------------------------------------------------------------------
    def push(self, event: ProtocolEvent) -> None:
        """Every transformer sees the event (even after one rejected it); then the main log, numbered
        after any events the transformers forwarded meanwhile."""
        keep = True
        for transformer in self._transformers:
            if not transformer.process(event):
                keep = False
        if keep:
            self._log(event)

    def close(self) -> None:
        """Finalize every transformer, then close the projections and the log; the first finalize
        error is raised after that cleanup."""
        first_error: BaseException | None = None
        for transformer in self._transformers:
            try:
                transformer.finalize()
            except BaseException as exc:
                first_error = first_error or exc
        self._close_channels()
        if first_error is not None:
            raise first_error

    def fail(self, err: BaseException) -> None:
        for transformer in self._transformers:
            # the run already failed with `err`: a transformer's own failure would hide it
            with contextlib.suppress(BaseException):
                transformer.fail(err)
        self._fail_channels(err)

    # -- async lane ------------------------------------------------------------------------------------
    async def apush(self, event: ProtocolEvent) -> None:
        keep = True
        for transformer in self._transformers:
            if not await transformer.aprocess(event):
                keep = False
        if keep:
            self._log(event)

    async def aclose(self) -> None:
        """Await the transformers' scheduled tasks (one that raised fails the close), then finalize."""
        pending = self._scheduled_tasks()
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                    raise result
        first_error: BaseException | None = None
        for transformer in self._transformers:
            try:
                await transformer.afinalize()
            except BaseException as exc:
                first_error = first_error or exc
        self._close_channels()
        if first_error is not None:
            raise first_error

    async def afail(self, err: BaseException) -> None:
        """Cancel the scheduled tasks, then fail the transformers, projections and log."""
        pending = self._scheduled_tasks()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for transformer in self._transformers:
            with contextlib.suppress(BaseException):
                await transformer.afail(err)
        self._fail_channels(err)

    def _scheduled_tasks(self) -> list[asyncio.Task[Any]]:
        return [task for t in self._transformers for task in t.scheduled_tasks() if not task.done()]

    # -- the main log ----------------------------------------------------------------------------------
    def _log(self, event: ProtocolEvent) -> None:
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def _forward(self, method: str, item: Any) -> None:
        """A named channel's push as an event of the main log (not shown to the transformers: one that
        pushes while processing would see its own push again)."""
        self._log(
            {
                "type": "event",
                "method": method,
                "params": {"namespace": [], "timestamp": int(time.time() * 1000), "data": item},
            }
        )

    def _close_channels(self) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.close()
        self._events.close()

    def _fail_channels(self, err: BaseException) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.fail(err)
        if not self._events._closed:
            self._events.fail(err)


def _builtins_last(transformers: Iterable[StreamTransformer]) -> list[StreamTransformer]:
    """`before_builtins` transformers first, each group in the order given."""
    ordered = list(transformers)
    return [t for t in ordered if getattr(t, "before_builtins", False)] + [
        t for t in ordered if not getattr(t, "before_builtins", False)
    ]
