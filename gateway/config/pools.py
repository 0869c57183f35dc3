"""How a pool of deployments behind one model name routes, cools down and keeps sessions (docs/pools.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PoolsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    affinity: bool = Field(
        default=True,
        description="Keep a session on the deployment holding its prompt-cache prefix (off: every request "
        "is balanced on its own, as other gateways do)",
    )
    cooldown_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds a deployment rests after a 5xx, timeout or unreachable (429: its retry-after)",
    )
    max_cooldown_s: float = Field(default=300.0, gt=0, description="Cap on any cooldown, retry-after included")
    breaker_failures: int = Field(
        default=3, ge=1, description="Failures within failure_window_s that open the deployment's circuit"
    )
    breaker_open_s: float = Field(
        default=60.0, gt=0, description="Seconds an open circuit stays shut before one half-open probe"
    )
    failure_window_s: float = Field(default=60.0, gt=0, description="Window over which failures are counted")
    min_headroom: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="A session leaves its deployment when less than this share of its rate limit is left",
    )
