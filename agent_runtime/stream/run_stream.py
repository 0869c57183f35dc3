"""The run streams `stream_events(version="v3")` returns: the caller's iteration of any projection
(or of the run's raw protocol events) pumps the graph one event at a time, so no background thread
or task runs the graph. Native projections are attributes (`run.values`, `run.lifecycle`, ...);
every projection is in `run.extensions`. As LangGraph's `langgraph.stream.run_stream`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.convert import convert_to_protocol_event
from agent_runtime.stream.mux import StreamMux
from agent_runtime.stream.outcome import ValuesOutcome
from agent_runtime.stream.protocol import ProtocolEvent

if TYPE_CHECKING:
    from agent_runtime.stream.transformers.lifecycle import SubgraphStatus


class _RunState(ValuesOutcome):
    """What both lanes share: the projections, and the run's outcome from its own values events."""

    _mux: StreamMux
    _exhausted: bool

    def _init_state(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._reset_outcome()
        self._scope_list = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def __getattr__(self, name: str) -> StreamChannel[Any]:
        """Only reached for a projection no registered transformer has (natives are attributes).
        `_mux` is read from `__dict__`: a half-built instance would recurse through this method."""
        _raise_missing_projection(self, name)

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] == "values" and event["params"]["namespace"] == self._scope_list:
            self._track_values(event["params"])

    def _raise_run_error(self) -> None:
        if (err := self._mux._events._error) is not None:
            raise err


def _raise_missing_projection(run: object, name: str) -> NoReturn:
    mux = run.__dict__.get("_mux")
    registered = ", ".join(sorted(mux.native_keys)) if mux is not None else ""
    raise AttributeError(
        f"{type(run).__name__!r} object has no attribute {name!r} (registered projections: {registered or 'none'})"
    )


class GraphRunStream(_RunState):
    """The sync run stream (`stream_events(..., version="v3")`); a context manager that aborts the
    run on exit. Projections are single-consumer (`tee(n)` to fan out)."""

    def __init__(self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True) -> None:
        self._graph_iter = graph_iter
        self._init_state(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """One graph event through the mux; False once the run ended (normally or not)."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            event = convert_to_protocol_event(next(self._graph_iter))
            self._observe_event(event)
            self._mux.push(event)
            return True
        except StopIteration:
            self._mux.close()
            self._exhausted = True
            return False
        except Exception as exc:
            self._mux.fail(exc)
            self._exhausted = True
            return False

    def _drive(self) -> None:
        while self._pump_next():
            pass
        self._raise_run_error()

    def abort(self) -> None:
        """Stop the run (its running nodes are cancelled) and close the projections. Idempotent."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        close = getattr(graph_iter, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()
        with contextlib.suppress(Exception):
            self._mux.close()

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.abort()

    @property
    def output(self) -> dict[str, Any] | None:
        """The run's final state (runs it to the end)."""
        self._drive()
        return self._latest

    @property
    def interrupted(self) -> bool:
        self._drive()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        self._drive()
        return self._interrupts

    def __iter__(self) -> Iterator[ProtocolEvent]:
        """The main event log."""
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """`(name, item)` from several projections in the order their items arrived (push stamps).
        The channels are subscribed while the generator runs and released after."""
        channels: dict[str, StreamChannel[Any]] = {}
        try:
            for name in names:
                channels[name] = _lock_for_interleave(name, self.extensions[name])
            yield from self._interleaved(channels)
        finally:
            for channel in channels.values():
                channel._subscribed = False

    def _interleaved(self, channels: dict[str, StreamChannel[Any]]) -> Iterator[tuple[str, Any]]:
        done: set[str] = set()
        while len(done) < len(channels):
            best: tuple[int, str] | None = None
            for name, channel in channels.items():
                if name in done:
                    continue
                if channel._items:
                    stamp = channel._items[0][0]
                    if best is None or stamp < best[0]:
                        best = (stamp, name)
                elif channel._closed:
                    _finish(channel)
                    done.add(name)
            if best is not None:
                yield best[1], channels[best[1]]._items.popleft()[1]
                continue
            pump = self._mux._pump_fn
            if pump is None or not pump():
                ended = {n for n, ch in channels.items() if n not in done and not ch._items and ch._closed}
                for name in ended:
                    _finish(channels[name])
                if not ended:
                    return
                done |= ended


def _lock_for_interleave(name: str, channel: Any) -> StreamChannel[Any]:
    if not isinstance(channel, StreamChannel):
        raise TypeError(f"interleave() requires StreamChannel projections, got {type(channel).__name__} for {name!r}")
    if channel._is_async is None:
        raise TypeError(
            f"StreamChannel {name!r} has not been bound yet. Register the transformer with a StreamMux first."
        )
    if channel._is_async:
        raise TypeError(
            f"StreamChannel {name!r} is bound to async mode — sync interleave() cannot consume async channels."
        )
    if channel._subscribed:
        raise RuntimeError(f"StreamChannel {name!r} already has a subscriber; use .tee(n) for fan-out.")
    channel._subscribed = True
    return channel


def _finish(channel: StreamChannel[Any]) -> None:
    """A drained, closed channel: its error, if the run failed."""
    if channel._error is not None:
        raise channel._error


class AsyncGraphRunStream(_RunState):
    """The async run stream (`await astream_events(..., version="v3")`); an async context manager.

    One cursor at a time advances the graph (asyncio iterators cannot be advanced concurrently);
    the others wait for that step and then look at their buffers again.
    """

    def __init__(self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True) -> None:
        self._graph_aiter = graph_aiter
        self._init_state(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            return await self._pull(self._graph_aiter)
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def _pull(self, graph_aiter: AsyncIterator[Any]) -> bool:
        try:
            # a child task, so abort() can cancel a pull in flight: the cancellation reaches the running
            # nodes, which aclose() on a generator that is running cannot do
            self._anext_task = asyncio.ensure_future(graph_aiter.__anext__())
            try:
                part = await self._anext_task
            except asyncio.CancelledError:
                if self._aborting:
                    self._exhausted = True
                    return False
                self._anext_task.cancel()
                raise
            finally:
                self._anext_task = None
            event = convert_to_protocol_event(part)
            self._observe_event(event)
            await self._mux.apush(event)
            return True
        except StopAsyncIteration:
            self._exhausted = True
            await self._mux.aclose()
            return False
        except Exception as exc:
            self._exhausted = True
            await self._mux.afail(exc)
            return False

    async def _drive(self) -> None:
        while await self._apump_next():
            pass
        self._raise_run_error()

    async def abort(self) -> None:
        """Stop the run: cancel a pull in flight, close the graph's iterator, close the mux. Idempotent."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            anext_task = self._anext_task
            self._pump_cond.notify_all()
        if anext_task is not None and not anext_task.done():
            anext_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await anext_task
        aclose = getattr(graph_aiter, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
        with contextlib.suppress(Exception):
            await self._mux.aclose()

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.abort()

    async def output(self) -> dict[str, Any] | None:
        """The run's final state (a method on this lane: `run.output` without await fails type checks)."""
        await self._drive()
        return self._latest

    async def interrupted(self) -> bool:
        await self._drive()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        await self._drive()
        return self._interrupts

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        return self._mux._events.__aiter__()


class _SubgraphHandle:
    """A discovered subgraph's metadata; SubgraphTransformer updates `status` / `error` in place."""

    def _init_handle(self, path: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status: SubgraphStatus = "started"
        self.error: str | None = None
        self._seen_terminal = False


class SubgraphRunStream(GraphRunStream, _SubgraphHandle):
    """A subgraph's run stream: its mini-mux is fed by the parent; reading it pumps the root run."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_pump_fn: Callable[[], bool] | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self._init_handle(path, graph_name, trigger_call_id)

    def _pump_next(self) -> bool:
        if self._exhausted or self._seen_terminal or self._mux._events._closed or self._parent_pump_fn is None:
            return False
        return self._parent_pump_fn()


class AsyncSubgraphRunStream(AsyncGraphRunStream, _SubgraphHandle):
    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_apump_fn: Callable[[], Awaitable[bool]] | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self._init_handle(path, graph_name, trigger_call_id)

    async def _apump_next(self) -> bool:
        if self._exhausted or self._seen_terminal or self._mux._events._closed or self._parent_apump_fn is None:
            return False
        return await self._parent_apump_fn()
