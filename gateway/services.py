"""Long-lived objects shared by every request of one gateway process."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from gateway.alerts import Alerts
from gateway.auth import KeyIdentity, KeyRing
from gateway.config import ModelConfig, PolicyConfig, Settings, TenantConfig, effective_policy
from gateway.ledger import Ledger, create_ledger
from gateway.ledger.seed import BudgetSeeder
from gateway.managed_keys import ManagedKeys
from gateway.metrics import GatewayMetrics
from gateway.request_log import RequestLog
from gateway.state import StateStore, create_store, durable
from gateway.tracing import Tracing
from gateway.upstream.lean import LeanUpstream
from gateway.upstream.litellm_path import LiteLLMUpstream
from gateway.upstream.router import Router, UpstreamPath

MAX_POLICIES = 4096

if TYPE_CHECKING:
    from gateway.pipeline import Pipeline


@dataclass(eq=False)
class Services:
    settings: Settings
    metrics: GatewayMetrics
    store: StateStore
    keys: KeyRing
    lean: LeanUpstream  # its aiohttp session lives in the serving event loop and is closed with it
    router: Router
    managed_keys: ManagedKeys
    requests: RequestLog
    tracing: Tracing
    alerts: Alerts  # webhooks (gateway/alerts/); its worker task runs in the app's lifespan
    ledger: Ledger | None = None  # None: turned off (ledger.enabled)
    budget_seeder: BudgetSeeder | None = None  # with the ledger: budget counters survive a Redis flush
    pipeline: Pipeline | None = None
    extras: dict[str, Any] = field(default_factory=dict)  # stage-owned long-lived objects, by stage name
    _policies: dict[bytes, PolicyConfig] = field(default_factory=dict)

    def policy_for(
        self, route: ModelConfig, tenant: TenantConfig | None, key: KeyIdentity | None = None
    ) -> PolicyConfig:
        """Global policy, overridden by the model's, then the tenant's, then the key's; computed once each."""
        key_policy = key.policy if key is not None else {}
        # By content, not by name: a request begun before a live change (gateway/live/) may bring the old
        # tenant or route, and must not leave its policy cached under the new one's name.
        overrides = [route.policy, tenant.policy if tenant else {}, key_policy]
        cache_key = orjson.dumps(overrides, option=orjson.OPT_SORT_KEYS)
        policy = self._policies.get(cache_key)
        if policy is None:
            policy = effective_policy(self.settings.policy, *overrides)
            if len(self._policies) >= MAX_POLICIES:  # key policies change at runtime: never grow without end
                self._policies.clear()
            self._policies[cache_key] = policy
        return policy

    def clear_policies(self) -> None:
        """Forget the computed policies: the global one changed (gateway/live/)."""
        self._policies.clear()

    async def close(self) -> None:
        for extra in self.extras.values():  # stage-owned resources (e.g. the embedder's worker thread)
            closer = getattr(extra, "aclose", None)
            if closer is not None:
                await closer()
        if self.budget_seeder is not None:
            self.budget_seeder.close()
        if self.ledger is not None:
            await self.ledger.close()  # writes what waits first
        await self.alerts.sender.aclose()
        await self.lean.aclose()
        await self.store.close()
        await asyncio.to_thread(self.tracing.shutdown)  # sends the spans still batched


def self_url(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{host}:{settings.port}"


def create_services(settings: Settings) -> Services:
    metrics = GatewayMetrics()
    store = create_store(
        settings.redis_url, lambda op: metrics.state_fallbacks.labels(op).inc(), settings.redis_timeout_s
    )
    alerts = Alerts(settings.alerts, store, metrics)  # before the router: pools' cooldowns may emit alerts
    lean = LeanUpstream()
    paths: dict[str, UpstreamPath] = {"lean": lean, "litellm": LiteLLMUpstream()}
    router = Router(settings, paths, metrics, self_url(settings), store, alerts.emit)
    keys = KeyRing(settings)
    managed_keys = ManagedKeys(durable(store), keys, settings.tenants)
    ledger = create_ledger(settings.ledger, metrics)
    seeder = None
    if ledger is not None:
        seeder = BudgetSeeder(store, ledger, settings.tenants, managed_keys, settings.ledger.seed_interval_s)
    return Services(
        settings=settings,
        metrics=metrics,
        store=store,
        keys=keys,
        managed_keys=managed_keys,
        lean=lean,
        router=router,
        requests=RequestLog(store, settings.request_log, metrics, ledger),
        tracing=Tracing(settings.tracing),
        alerts=alerts,
        ledger=ledger,
        budget_seeder=seeder,
    )
