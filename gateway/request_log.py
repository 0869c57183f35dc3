"""Request records: one compact record per request, failures included, in the shared state store.

A record holds what happened to the request, not its content (unless its tenant opts in with
`record_content`: then the request and response bodies too, each cut at 32 KB): ids (request, tenant, key, session),
model and route, API, status and error, tokens by kind, cost and savings, each stage's decision (cache
tier, prefix-break cause, guard action, compaction) and timings (per stage, upstream, first byte, total).
Records are written off the request path by one background task (a bounded queue: when the store falls
behind, records are dropped and counted, requests never wait), each twice: under its id (read back by
GET /v1/requests/{id} with the tenant's key, or by the admin) and at the end of its tenant's capped
list (the admin's queries and the session explorer, which therefore read the same on every replica).
Requests without a valid key are recorded at most `unauthenticated_per_s` a second per replica (the rest
dropped and counted), so that anyone who can reach the gateway cannot fill the store with records.
Every record also goes to the ledger (gateway/ledger/), which keeps them for months in a database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.config.request_log import RequestLogConfig
from gateway.context import RequestContext
from gateway.errors import GatewayError
from gateway.ledger import Ledger
from gateway.logs import log_failure
from gateway.metrics import GatewayMetrics
from gateway.state import Op, StateStore

log = logging.getLogger("cachegate.requests")
DECISIONS = {"cache": "x-cachegate-cache", "prefix_break": "x-cachegate-prefix-break",
             "guard": "x-cachegate-guard", "compaction": "x-cachegate-compaction"}  # fmt: skip
CONTENT_BYTES = 32 * 1024  # of each body, for tenants that opt in to content in their records
UNAUTHENTICATED = "unknown"  # the tenant of a request without a valid key (RequestContext.tenant_label)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def build(ctx: RequestContext, error: GatewayError | None) -> dict[str, Any]:
    """The request's record (no prompt, no answer, no key)."""
    from gateway.stages.usage import side_cost  # here: gateway.stages imports the services, which import us

    usage, cost, timings, side = ctx.usage, ctx.cost, ctx.timings, side_cost(ctx)
    record: dict[str, Any] = {
        "id": ctx.request_id,
        "at": time.time(),
        "tenant": ctx.tenant_label,
        "key": ctx.key.id if ctx.key is not None else None,
        "session": ctx.session_id,
        "model": ctx.model_name[:200],
        "route": ctx.route.name if ctx.route is not None else None,
        "deployment": ctx.notes.get("deployment"),  # the pool's deployment that answered, and why (pools/)
        "provider": ctx.reply.provider if ctx.reply is not None else None,
        "api": ctx.wire.name,
        "stream": ctx.stream,
        "status": error.status if error is not None else 200,
        "error": error.kind.value if error is not None else None,
        "error_code": error.code if error is not None else None,
        "source": ctx.reply.source if ctx.reply is not None else None,
        "tokens": {
            "input": usage.uncached_input if usage else 0,
            "cache_read": usage.cache_read if usage else 0,
            "cache_write": usage.cache_write if usage else 0,
            "output": usage.output if usage else 0,
        },
        "cost_usd": cost.usd if cost else 0.0,
        "cost_basis": "fallback" if cost and cost.estimated else "list",  # fallback: the model has no known price
        "side_cost_usd": side.usd if side else 0.0,  # calls made for it (a compaction summary): also billed
        "saved_usd": cost.saved_usd if cost else 0.0,
        **{name: ctx.response_headers.get(header) for name, header in DECISIONS.items()},
        "stages_ms": stage_ms(timings.stages),
        "upstream_ms": _ms(timings.upstream_s),
        "ttft_ms": _ms(timings.first_byte - timings.start) if timings.first_byte is not None else None,
        "total_ms": _ms(time.perf_counter() - timings.start),
    }
    if ctx.tenant is not None and ctx.tenant.record_content:
        record["content"] = {"request": _capped(ctx.body), "response": _capped(ctx.response_body)}
    return record


def _capped(body: dict[str, Any] | None) -> str | None:
    """A body as JSON text, cut at CONTENT_BYTES (bytes that cannot be encoded are replaced)."""
    if body is None:
        return None
    try:
        raw = orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError):
        raw = str(body).encode("utf-8", "replace")
    return raw[:CONTENT_BYTES].decode("utf-8", "ignore")


def stage_ms(stages: list[tuple[str, str, float, float]]) -> dict[str, float]:
    """Milliseconds in each stage, its request and response sides together."""
    spent: dict[str, float] = {}
    for name, _, start, end in stages:
        spent[name] = spent.get(name, 0.0) + end - start
    return {name: _ms(seconds) for name, seconds in spent.items()}


def _record_key(tenant: str, request_id: str) -> str:
    return f"requests:{{{tenant}}}:id:{request_id}"


def _list_key(tenant: str) -> str:
    return f"requests:{{{tenant}}}:log"


@dataclass(frozen=True, slots=True)
class Query:
    """Filters of GET /admin/requests; None: any."""

    tenant: str | None = None
    key: str | None = None
    session: str | None = None
    model: str | None = None
    status: int | None = None
    guard: str | None = None  # the guard's action: nudge, stop, block ...
    since: float | None = None
    until: float | None = None

    def matches(self, record: dict[str, Any]) -> bool:
        guard = (record.get("guard") or "").split(";")[0] or None
        return (
            self.key in (None, record.get("key"))
            and self.session in (None, record.get("session"))
            and self.model in (None, record.get("model"), record.get("route"))
            and self.status in (None, record.get("status"))
            and self.guard in (None, guard)
            and (self.since is None or record["at"] >= self.since)
            and (self.until is None or record["at"] <= self.until)
        )


class TokenBucket:
    """At most `rate` a second on average and `rate` (at least one, unless none) at once."""

    def __init__(self, rate: float) -> None:
        self.rate, self.capacity = rate, max(rate, 1.0) if rate > 0 else 0.0
        self.tokens, self.at = self.capacity, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class RequestLog:
    def __init__(
        self, store: StateStore, config: RequestLogConfig, metrics: GatewayMetrics, ledger: Ledger | None = None
    ) -> None:
        self.store, self.config, self.metrics, self.ledger = store, config, metrics, ledger
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=config.queue)
        self.unauthenticated = TokenBucket(config.unauthenticated_per_s)

    def add(self, record: dict[str, Any]) -> None:
        """Queue the record for the store (24 h, for the request views) and the ledger (months, for spend)."""
        if not self.config.enabled and self.ledger is None:
            return
        if record["tenant"] == UNAUTHENTICATED and not self.unauthenticated.take():
            self.metrics.request_records_dropped.inc()
            return
        if self.ledger is not None:
            self.ledger.add(record)
        if not self.config.enabled:
            return
        try:
            self.queue.put_nowait(record)
        except asyncio.QueueFull:
            self.metrics.request_records_dropped.inc()

    async def run(self) -> None:
        """Write records a batch at a time. On Redis the writer first waits `batch_linger_s` for more: written
        as they came, each request's record was a round trip of its own (at 100 requests a second, 0.05 s
        carries five in one), and a record is only read back by someone looking at the request later."""
        linger = self.config.batch_linger_s if self.store.backend != "memory" else 0.0
        while True:
            batch = [await self.queue.get()]
            if linger:
                await asyncio.sleep(linger)
            while not self.queue.empty() and len(batch) < 256:
                batch.append(self.queue.get_nowait())
            try:
                await self._write(batch)
            except Exception:  # the store failed: these records are lost (counted), the next ones go on
                self.metrics.request_records_dropped.inc(len(batch))
                log_failure(log, "request records: writing failed")

    @property
    def _by_id(self) -> bool:
        """Records are also kept under their id in Redis; in the in-process store they would compete with
        session state for its bounded keys, so there a lookup searches the tenant's list instead."""
        return self.store.backend != "memory"

    async def _write(self, records: list[dict[str, Any]]) -> None:
        """The records in one round trip (one state batch, in order): each into its tenant's list and, on
        Redis, under its id."""
        ttl, ops = self.config.ttl_s, []
        for record in records:
            raw, tenant = orjson.dumps(record), record["tenant"]
            ops.append(Op("push", _list_key(tenant), ttl_s=ttl, values=(raw,), max_len=self.config.per_tenant))
            if self._by_id:
                ops.append(Op("set", _record_key(tenant, record["id"]), ttl_s=ttl, values=(raw,)))
        await self.store.batch(ops)

    async def get(self, tenant: str, request_id: str) -> dict[str, Any] | None:
        if self._by_id:
            raw = await self.store.get(_record_key(tenant, request_id))
            return orjson.loads(raw) if raw else None
        needle = f'"id":"{request_id}"'.encode()
        for raw in reversed(await self.store.range(_list_key(tenant))):
            if needle in raw:
                return dict(orjson.loads(raw))
        return None

    async def recent(
        self, tenants: Iterable[str], query: Query = Query(), limit: int = 100, scan: int = 2000
    ) -> list[dict[str, Any]]:
        """The newest records matching `query`, newest first, among each tenant's newest `scan` records."""
        found: list[dict[str, Any]] = []
        for tenant in tenants:
            if query.tenant not in (None, tenant):
                continue
            for raw in reversed(await self.store.range(_list_key(tenant), -scan, -1)):
                record = orjson.loads(raw)
                if query.matches(record):
                    found.append(record)
        found.sort(key=lambda record: record["at"], reverse=True)
        return found[:limit]
