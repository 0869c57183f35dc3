"""Request records (gateway/request_log.py): one compact record per request, in the shared store."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RequestLogConfig(BaseModel):
    enabled: bool = True
    ttl_s: float = Field(default=86400.0, gt=0, description="How long a record is kept")
    per_tenant: int = Field(default=10_000, gt=0, description="Newest records kept per tenant for queries")
    queue: int = Field(default=10_000, gt=0, description="Records waiting to be written; beyond, dropped (counted)")
    batch_linger_s: float = Field(
        default=0.05,
        ge=0,
        le=5,
        description="On Redis, how long the writer waits for more records before its round trip (0: none)",
    )
    unauthenticated_per_s: float = Field(
        default=10.0,
        ge=0,
        description="Records of requests without a valid key kept per second per replica; beyond, dropped (counted)",
    )
