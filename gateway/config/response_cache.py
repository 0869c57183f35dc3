"""Response cache policy, exact and semantic tiers (stage: gateway/stages/response_cache.py)."""

from __future__ import annotations

from pydantic import BaseModel


class ResponseCacheConfig(BaseModel):
    enabled: bool = True
