"""Per-deployment health shared by replicas through the state store: cooldowns and a circuit breaker.

A retryable failure rests its deployment: a 429 for its retry-after (else `cooldown_s`), a 5xx, timeout
or unreachable provider for `cooldown_s`. Failures other than 429s within `failure_window_s` count; at
`breaker_failures` the circuit opens for `breaker_open_s`; after it, one request (on any replica) probes
it (half-open): a success closes the circuit, a failure opens it again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from gateway.config.pools import PoolsConfig
from gateway.pools.model import Deployment
from gateway.state import Op, StateStore
from gateway.upstream.errors import UpstreamError, UpstreamTimeout

Reason = Literal["rate_limit", "timeout", "server_error", "unreachable"]
MIN_COOLDOWN_S = 1.0  # a 429 with `retry-after: 0` still rests its deployment a moment


@dataclass(frozen=True, slots=True)
class Standing:
    """A deployment's health as the store last saw it."""

    cooling_until: float  # epoch seconds; 0: not cooling
    failures: int
    headroom: float  # 0..1: the share of its rate limits left (headers and our own counts)

    def cooling(self, now: float) -> bool:
        return self.cooling_until > now


def failure_reason(exc: UpstreamError) -> Reason:
    if exc.status == 429:
        return "rate_limit"
    if isinstance(exc, UpstreamTimeout) or exc.status in (408, 504):
        return "timeout"
    # The lean path's own 502 for a provider it could not reach or that dropped the stream.
    return "unreachable" if exc.status == 502 and exc.message.startswith("The gateway ") else "server_error"


def _key(deployment: Deployment, what: str) -> str:
    return f"pools:{{{deployment.pool}}}:{deployment.id}:{what}"


class Health:
    def __init__(self, store: StateStore, config: PoolsConfig) -> None:
        self.store, self.config = store, config

    def reads(self, deployment: Deployment) -> list[Op]:
        """The ops that read one deployment's cooldown and failure count (batched with the others)."""
        return [Op("get", _key(deployment, "cool")), Op("get", _key(deployment, "fails"))]

    @staticmethod
    def parse(cool: bytes | None, fails: bytes | None) -> tuple[float, int]:
        try:
            return (float(cool) if cool else 0.0), (int(fails) if fails else 0)
        except ValueError:
            return 0.0, 0

    def half_open(self, standing: Standing, now: float) -> bool:
        return standing.failures >= self.config.breaker_failures and not standing.cooling(now)

    async def claim_probe(self, deployment: Deployment) -> bool:
        """Whether this request is the one probe of a half-open circuit (others go elsewhere meanwhile)."""
        return await self.store.set(_key(deployment, "probe"), b"1", deployment.route.timeout_s, only_new=True)

    async def failed(self, deployment: Deployment, exc: UpstreamError) -> tuple[Reason, bool, float]:
        """Rest the deployment; returns why, whether its circuit is (now) open and for how many seconds."""
        reason, config = failure_reason(exc), self.config
        rest = max(exc.retry_after or 0.0, MIN_COOLDOWN_S) if reason == "rate_limit" else config.cooldown_s
        opened = False
        if reason != "rate_limit":
            failures = await self.store.incr(_key(deployment, "fails"), 1, config.failure_window_s)
            if failures >= config.breaker_failures:
                opened, rest = True, max(rest, config.breaker_open_s)
                # The count outlives the open circuit, so that its end is a half-open probe.
                await self.store.set(_key(deployment, "fails"), str(failures).encode(), rest + config.failure_window_s)
        rest = min(rest, config.max_cooldown_s)
        await self.store.set(_key(deployment, "cool"), str(time.time() + rest).encode(), rest)
        await self.store.delete(_key(deployment, "probe"))
        return reason, opened, rest

    async def succeeded(self, deployment: Deployment, standing: Standing | None) -> None:
        """A success closes a half-open circuit (nothing to write for a healthy deployment)."""
        if standing is not None and standing.failures:
            await self.store.delete(_key(deployment, "fails"), _key(deployment, "probe"))
