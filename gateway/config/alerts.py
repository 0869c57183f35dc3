"""Alert webhooks (docs/alerts.md): where alerts go, which events each destination takes, how deliveries
retry, and when a tenant's cache-hit ratio counts as fallen. Destinations come from this config only:
nothing in a request or a tenant's policy names a URL."""

from __future__ import annotations

import os
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

AlertEvent = Literal["guard_stop", "guard_block", "budget_soft", "budget_hard", "cache_hit_drop", "deployment_cooldown"]
ALERT_EVENTS: tuple[AlertEvent, ...] = get_args(AlertEvent)


class AlertDestination(BaseModel):
    """One webhook receiver (Slack incoming webhook or any HTTP endpoint taking Slack-shaped JSON)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, description="Label in metrics and logs (the URL never is)")
    url: str = Field(description="http(s) URL the alerts are POSTed to; redirects are not followed")
    secret_env: str | None = Field(
        default=None,
        description="Environment variable holding the HMAC-SHA256 signing secret (x-cachegate-signature); "
        "None: unsigned (Slack's own webhooks ignore it)",
    )
    events: list[AlertEvent] = Field(default_factory=lambda: list(ALERT_EVENTS), min_length=1)
    min_interval_s: float = Field(
        default=0.0, ge=0, description="At least this long between two alerts of one event kind and tenant"
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        return url

    @field_validator("secret_env")
    @classmethod
    def _secret_set(cls, name: str | None) -> str | None:
        if name is not None and not os.environ.get(name):
            raise ValueError(f"environment variable {name} (the signing secret) is not set")
        return name

    def secret(self) -> bytes | None:
        return os.environ[self.secret_env].encode() if self.secret_env else None


class CacheHitWatch(BaseModel):
    """A tenant's cache-hit ratio (response-cache answers and prompt-cache reads, per request) over its last
    `window` requests against the `baseline` requests before them: it has fallen when below
    `drop_fraction` of the baseline's, and fires again only once it is back above that."""

    model_config = ConfigDict(extra="forbid")

    window: int = Field(default=100, gt=0, description="Recent requests whose ratio is watched")
    baseline: int = Field(default=500, gt=0, description="Requests before them that set the baseline")
    drop_fraction: float = Field(default=0.5, gt=0, lt=1)
    min_baseline: float = Field(default=0.1, ge=0, le=1, description="Below this baseline ratio: no alert")


class AlertsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    destinations: list[AlertDestination] = Field(default_factory=list, description="Empty: alerts off")
    max_attempts: int = Field(default=5, ge=1, le=20, description="Tries per delivery (5xx, 429, 408, no answer)")
    backoff_s: float = Field(default=0.5, gt=0, description="First retry's delay; doubles, with jitter")
    max_backoff_s: float = Field(default=30.0, gt=0)
    timeout_s: float = Field(default=5.0, gt=0, description="Per try")
    queue_size: int = Field(default=1000, gt=0, description="Alerts waiting; past it new ones are dropped")
    dedupe_ttl_s: float = Field(
        default=86400.0, gt=0, description="How long an event is remembered (replicas share it via the state store)"
    )
    cache_hit: CacheHitWatch = Field(default_factory=CacheHitWatch)

    @field_validator("destinations")
    @classmethod
    def _unique_names(cls, destinations: list[AlertDestination]) -> list[AlertDestination]:
        names = [d.name for d in destinations]
        if len(set(names)) != len(names):
            raise ValueError("destination names must be unique")
        return destinations
