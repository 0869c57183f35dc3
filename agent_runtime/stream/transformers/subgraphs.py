"""SubgraphTransformer: `run.subgraphs`, a navigation handle per direct child subgraph. Each handle
has its own mini-mux (the same transformer factories, scoped to the child's namespace), fed with the
events of that namespace and below, so `handle.values`, `handle.subgraphs` (grandchildren), ... work
like the root's."""

from __future__ import annotations

import logging
from typing import Any

from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.mux import StreamMux
from agent_runtime.stream.protocol import ProtocolEvent
from agent_runtime.stream.run_stream import AsyncSubgraphRunStream, SubgraphRunStream
from agent_runtime.stream.transformers.lifecycle import SubgraphStatus, TasksLifecycleBase, _status_from_exception

_logger = logging.getLogger(__name__)
Handle = SubgraphRunStream | AsyncSubgraphRunStream


class SubgraphTransformer(TasksLifecycleBase):
    _native = True
    supports_sync = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Handle] = StreamChannel()
        self._handles: dict[tuple[str, ...], Handle] = {}
        self._mux: StreamMux | None = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        """Direct children only: a child's mini-mux discovers its own children."""
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        if self._mux is None:
            return
        try:
            child_mux = self._mux._make_child(ns)
        except RuntimeError:
            return  # a mux of pre-built transformers cannot build a child pipeline
        handle_cls = AsyncSubgraphRunStream if child_mux.is_async else SubgraphRunStream
        handle = handle_cls(child_mux, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    # -- ending handles --------------------------------------------------------------------------------
    def _mark_terminal(self, handle: Handle, status: SubgraphStatus, error: str | None) -> bool:
        """Set the handle's final status once; True on that first transition."""
        if handle._seen_terminal:
            return False
        handle.status = status
        if error is not None and handle.error is None:
            handle.error = error
        handle._seen_terminal = True
        return True

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error) or handle._mux._events._closed:
            return
        if status == "failed":
            handle._mux.fail(RuntimeError(error or "Subgraph failed"))
        else:
            handle._mux.close()

    async def _aon_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._handles.get(ns)
        if handle is None or not self._mark_terminal(handle, status, error) or handle._mux._events._closed:
            return
        if status == "failed":
            await handle._mux.afail(RuntimeError(error or "Subgraph failed"))
        else:
            await handle._mux.aclose()

    # -- routing ---------------------------------------------------------------------------------------
    def _handle_for_event(self, event: ProtocolEvent) -> Handle | None:
        """The open handle of the child whose namespace the event is in (or below)."""
        ns = tuple(event["params"]["namespace"])
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(ns[: depth + 1])
        if handle is None or handle._mux._events._closed:
            return None
        return handle

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)  # a `started` handle exists before the event is forwarded to it
        handle = self._handle_for_event(event)
        if handle is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return keep

    async def aprocess(self, event: ProtocolEvent) -> bool:
        keep = event["method"] != "tasks"
        if not keep:
            for child_ns, status, error in self._observe_tasks_event(event):
                await self._aon_terminal(child_ns, status, error)
        handle = self._handle_for_event(event)
        if handle is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return keep

    # -- the run's end ---------------------------------------------------------------------------------
    def finalize(self) -> None:
        first_error: BaseException | None = None
        for handle in self._ending_handles():
            try:
                self._on_terminal(handle.path, "completed", None)
            except BaseException as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error

    async def afinalize(self) -> None:
        first_error: BaseException | None = None
        for handle in self._ending_handles():
            try:
                await self._aon_terminal(handle.path, "completed", None)
            except BaseException as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error

    def _ending_handles(self) -> list[Handle]:
        """The handles not yet ended, at the run's normal end (all of them complete)."""
        self._open.clear()
        return [handle for handle in self._handles.values() if not handle._seen_terminal]

    def fail(self, err: BaseException) -> None:
        for handle in self._failing_handles(err):
            try:
                handle._mux.fail(err)
            except Exception:
                _logger.warning("Error failing subgraph mini-mux at %s", handle.path, exc_info=True)

    async def afail(self, err: BaseException) -> None:
        for handle in self._failing_handles(err):
            try:
                await handle._mux.afail(err)
            except Exception:
                _logger.warning("Error failing subgraph mini-mux at %s", handle.path, exc_info=True)

    def _failing_handles(self, err: BaseException) -> list[Handle]:
        """Every handle takes the run's failure status; those still open are failed with `err`."""
        status, error = _status_from_exception(err)
        self._open.clear()
        for handle in self._handles.values():
            self._mark_terminal(handle, status, error)
        return [handle for handle in self._handles.values() if not handle._mux._events._closed]
