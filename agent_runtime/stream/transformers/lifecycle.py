"""Subgraph lifecycle inferred from the `tasks` stream: a namespace starts at its first task event
and ends when its parent task's result arrives (completed, failed or interrupted). The shared
bookkeeping (`TasksLifecycleBase`) drives two surfaces: LifecycleTransformer's `lifecycle` channel
(wire events) and SubgraphTransformer's navigation handles. As LangGraph's."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from agent_runtime.errors import GraphInterrupt
from agent_runtime.stream.channel import StreamChannel
from agent_runtime.stream.protocol import ProtocolEvent, StreamTransformer

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]
Transition = tuple[tuple[str, ...], SubgraphStatus, str | None]


class LifecyclePayload(TypedDict, total=False):
    """An event of the `lifecycle` channel (forwarded to the main log as method `lifecycle`)."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    cause: NotRequired[dict[str, str]]  # {"type": "toolCall", "tool_call_id": ...}
    error: NotRequired[str]


class TasksLifecycleBase(StreamTransformer):
    """Tracks the namespaces `_should_track` selects: `_on_started` at the first task event seen in
    one, `_on_terminal` when the parent task's result comes (or at the run's end). Task events are
    folded into these surfaces, so they are kept out of the main log."""

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._seen: set[tuple[str, ...]] = set()
        self._open: dict[tuple[str, ...], str] = {}  # tracked namespace -> the parent task id ending it
        self._lc_by_ns: dict[tuple[str, ...], str | None] = {}  # namespace -> its lc_agent_name
        self._pending_tool_calls: dict[str, str] = {}  # task id -> the LLM tool call that started it
        # the `cause` of the `_on_started` call in progress (an attribute, not a parameter: subclasses
        # written before it existed keep working)
        self._pending_cause: dict[str, str] | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        for child_ns, status, error in self._observe_tasks_event(event):
            self._on_terminal(child_ns, status, error)
        return False

    def _observe_tasks_event(self, event: ProtocolEvent) -> list[Transition]:
        """A task start (which may start a tracked namespace: `_on_started`), or a task result: the
        tracked namespaces it ends, for the caller to end on its lane."""
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            return self._pop_terminal_transitions(ns, data)
        self._record_identity(ns, data)
        self._record_pending_tool_calls(data)
        self._handle_task_start(ns, data)
        return []

    def _record_identity(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns not in self._lc_by_ns:
            self._lc_by_ns[ns] = (data.get("metadata") or {}).get("lc_agent_name")

    def _record_pending_tool_calls(self, data: dict[str, Any]) -> None:
        """A tool task's tool call id, by task id: the subgraph it spawns (namespace `node:<task id>`)
        finds the call that caused it. Input: a `tool_call_with_context` dict or a list of calls."""
        task_id = data.get("id")
        if not isinstance(task_id, str):
            return
        payload = data.get("input")
        tool_call_id: str | None = None
        if isinstance(payload, dict) and isinstance(payload.get("tool_call"), dict):
            candidate = payload["tool_call"].get("id")
            tool_call_id = candidate if isinstance(candidate, str) else None
        elif isinstance(payload, list):
            tool_call_id = next(
                (c["id"] for c in payload if isinstance(c, dict) and isinstance(c.get("id"), str)), None
            )
        if tool_call_id is not None:
            self._pending_tool_calls[task_id] = tool_call_id

    def _handle_task_start(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if not self._should_track(ns) or ns in self._seen:
            return
        self._seen.add(ns)
        node_name, trigger_call_id = _parse_ns_segment(ns[-1])
        # a subagent (a nested run with an lc_agent_name) is named after its agent, and its cause is the
        # tool call that spawned it
        agent_name = (data.get("metadata") or {}).get("lc_agent_name")
        cause = None
        if agent_name is not None and trigger_call_id is not None:
            tool_call_id = self._pending_tool_calls.get(trigger_call_id)
            if tool_call_id:
                cause = {"type": "toolCall", "tool_call_id": str(tool_call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent_name if agent_name is not None else (node_name or None), trigger_call_id)
        if trigger_call_id is not None:
            self._open[ns] = trigger_call_id

    def _pop_terminal_transitions(self, ns: tuple[str, ...], data: dict[str, Any]) -> list[Transition]:
        """The tracked children of `ns` whose parent task this result is (no longer open)."""
        result_id = data.get("id")
        if not result_id:
            return []
        closed = [child for child, task_id in self._open.items() if child[:-1] == ns and task_id == result_id]
        status, error = _terminal_from_result(data)
        for child in closed:
            del self._open[child]
        return [(child, status, error) for child in closed]

    def finalize(self) -> None:
        for ns in list(self._open):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _status_from_exception(err)
        for ns in list(self._open):
            self._on_terminal(ns, status, error)
        self._open.clear()


def _parse_ns_segment(segment: str) -> tuple[str, str | None]:
    """`node:task_id` -> (node, task_id); a segment without `:` has no task id."""
    name, sep, task_id = segment.partition(":")
    return name, task_id if sep else None


def _status_from_exception(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _terminal_from_result(payload: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    """A task result's status; interrupts win over an error (an interrupt is not an error)."""
    if payload.get("interrupts"):
        return "interrupted", None
    error = payload.get("error")
    if error:
        return "failed", str(error)
    return "completed", None


class LifecycleTransformer(TasksLifecycleBase):
    """`run.lifecycle`: started / completed / failed / interrupted events of the subgraphs at every
    depth below the scope, in one flat stream (also in the main log, as `lifecycle` events)."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None) -> None:
        if trigger_call_id is None:
            return  # no task id: no result can end it (finalize/fail close it)
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)
