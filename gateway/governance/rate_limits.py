"""Rate limits of a request's tenant and key, as state-store windows (docs/governance.md).

Requests per minute: a sliding window of the last 60 s. Tokens per minute: the same window over tokens
(`token_meters`). Concurrent requests: places held from the
request's start to its end (streams: the last event), leased for `CONCURRENCY_LEASE_S` so that the places
of a replica that died free themselves. Every window of a request is taken at once or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.auth import KeyIdentity
from gateway.config import TenantConfig
from gateway.config.limits import Limits
from gateway.state.base import Meter, Window

MINUTE_S = 60.0
CONCURRENCY_LEASE_S = 900.0  # longer than any request the gateway lets run


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose limits: the tenant's (all its keys together) or one key's."""

    name: str  # "tenant" or "key", for messages
    key: str  # its windows' key prefix
    limits: Limits


def scopes(tenant: TenantConfig, key: KeyIdentity | None) -> list[Scope]:
    """The tenant's limits and, for a key with its own, the key's."""
    # The tenant in a hash tag: one request's windows share a Redis Cluster slot (one atomic script).
    base = f"ratelimit:{{{tenant.name}}}"
    found = [Scope("tenant", f"{base}:tenant", tenant.limits)]
    if key is not None:
        found.append(Scope("key", f"{base}:key:{key.id}", key.limits))
    return found


def rate_windows(found: list[Scope]) -> list[tuple[Scope, Window]]:
    windows = []
    for scope in found:
        if scope.limits.requests_per_minute is not None:
            windows.append((scope, Window(f"{scope.key}:rpm", scope.limits.requests_per_minute, MINUTE_S)))
    return windows


def concurrency_windows(found: list[Scope]) -> list[tuple[Scope, Window]]:
    windows = []
    for scope in found:
        if scope.limits.concurrent_requests is not None:
            window = Window(f"{scope.key}:concurrent", scope.limits.concurrent_requests, CONCURRENCY_LEASE_S)
            windows.append((scope, window))
    return windows


def token_meters(found: list[Scope]) -> list[tuple[Scope, Meter]]:
    """Tokens per minute: a sliding window of the tokens of the last 60 s; a request in flight counts its
    worst case (gateway/governance/estimate.py), then its actual tokens from its end."""
    meters = []
    for scope in found:
        if scope.limits.tokens_per_minute is not None:
            meters.append((scope, Meter(f"{scope.key}:tpm", scope.limits.tokens_per_minute, MINUTE_S)))
    return meters
