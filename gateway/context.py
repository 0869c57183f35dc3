"""The one object every pipeline stage reads and writes for a request."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gateway.config import ModelConfig, PolicyConfig, TenantConfig
from gateway.history import HistoryView
from gateway.history.view import RawHistory
from gateway.state.request import RequestStore
from gateway.usage import Cost, Usage
from gateway.wire import WireFormat
from gateway.wire.sse import SSEEvent

if TYPE_CHECKING:
    from gateway.auth import KeyIdentity
    from gateway.services import Services


@dataclass(eq=False)
class Reply:
    """What answers the client: a complete response, or a stream of events in the caller's shape."""

    body: dict[str, Any] | None = None
    events: AsyncIterator[SSEEvent] | None = None
    source: str = "upstream"  # upstream | response_cache | guard | gateway
    provider: str = "none"


@dataclass(eq=False)
class Timings:
    start: float = field(default_factory=time.perf_counter)
    upstream_s: float = 0.0  # time spent waiting on the provider (streams: until its first event)
    first_byte: float | None = None
    # Each stage hook that ran: (stage, "request" | "response", start, end), perf_counter seconds.
    stages: list[tuple[str, str, float, float]] = field(default_factory=list)


# A stream observer sees each text delta; returning True asks the gateway to end the stream there.
StreamObserver = Callable[[str], bool]


@dataclass(eq=False)
class RequestContext:
    wire: WireFormat
    body: dict[str, Any]
    headers: Mapping[str, str]
    services: Services
    read_body: Callable[[], Awaitable[Any]] | None = None  # the raw JSON body, read after authentication
    raw_history: RawHistory | None = None  # the body's bytes and the history parsed from them
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    tenant: TenantConfig | None = None
    key: KeyIdentity | None = None  # the caller's key (id, limits), set with the tenant by the auth stage
    session_id: str | None = None
    route: ModelConfig | None = None
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    reply: Reply | None = None
    response_body: dict[str, Any] | None = None  # the final response, streams included, for response stages
    gateway_written: bool = False  # the gateway wrote or cut the answer (guard stop, chanting cut): never cached
    usage: Usage | None = None
    cost: Cost | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    stream_observers: list[StreamObserver] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    notes: dict[str, Any] = field(default_factory=dict)  # per-stage facts for logs and admin views
    # Run once when the request ends however it ends (answered, failed, cancelled, stream done).
    finishers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # APIs that name the model and streaming in the URL (Gemini: /v1beta/models/{model}:streamGenerateContent)
    # set them here; the body keeps only the API's own fields.
    path_model: str | None = None
    path_stream: bool | None = None
    query_key: str | None = None  # an API key sent as ?key= (Gemini API only), never logged
    _history: HistoryView | None = None
    _state: RequestStore | None = None

    @property
    def history(self) -> HistoryView:
        """Per-message facts of this request's history, shared by the stages (gateway/history/)."""
        if self._history is None:
            return self.open_history(self.session_id)
        return self._history

    def open_history(self, session_id: str | None) -> HistoryView:
        """The history view, opened for `session_id` (the parse stage's, before the session stage names it:
        the same id) when no stage opened it yet."""
        if self._history is None:
            session = (self.tenant_label, session_id) if session_id else None
            self._history = HistoryView(raw=self.raw_history, session=session)
        return self._history

    @property
    def state(self) -> RequestStore:
        """The shared store as this request's stages use it: reads declared ahead and deferred writes
        travel with its next batch (gateway/state/request.py); what is still deferred is sent at the end."""
        if self._state is None:
            self._state = RequestStore(self.services.store)
            self.finishers.append(self._state.flush)
        return self._state

    @property
    def used_state(self) -> RequestStore | None:
        """The request's store view, if a stage used it."""
        return self._state

    @property
    def stream(self) -> bool:
        return self.path_stream if self.path_stream is not None else bool(self.body.get("stream"))

    @property
    def model_name(self) -> str:
        return self.path_model if self.path_model is not None else str(self.body.get("model", ""))

    @property
    def tenant_label(self) -> str:
        return self.tenant.name if self.tenant else "unknown"

    @property
    def model_label(self) -> str:
        return self.route.name if self.route else "unknown"

    @property
    def session_key(self) -> str | None:
        """Session id scoped by tenant: tenants never share sessions."""
        return f"{self.tenant_label}:{self.session_id}" if self.session_id else None
