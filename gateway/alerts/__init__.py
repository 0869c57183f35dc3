"""Alert webhooks (docs/alerts.md): guard stops and blocks, budget soft and hard limits, a fall in a
tenant's cache-hit ratio, deployment cooldowns. Stages call `Alerts.emit` (never waits, never raises);
a background task started with the app deduplicates each event across replicas and delivers it to the
operator's configured destinations."""

from gateway.alerts.events import Alert, budget_alert, cache_hit_drop, deployment_cooldown, guard_alert
from gateway.alerts.service import Alerts

__all__ = ["Alert", "Alerts", "budget_alert", "cache_hit_drop", "deployment_cooldown", "guard_alert"]
