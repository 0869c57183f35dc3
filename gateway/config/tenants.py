"""Tenants and their virtual API keys (stored as SHA-256 hashes, never in clear)."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, Field, field_validator


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class TenantConfig(BaseModel):
    name: str
    keys: list[str] = Field(default_factory=list, description="Hashed keys: 'sha256:<hex>'")
    policy: dict[str, Any] = Field(default_factory=dict, description="Per-tenant policy overrides")
    allowed_models: list[str] | None = None

    @field_validator("keys")
    @classmethod
    def _hashed(cls, keys: list[str]) -> list[str]:
        for key in keys:
            if not key.startswith("sha256:") or len(key) != 71:
                raise ValueError("tenant keys must be stored hashed: 'sha256:<64 hex>' (cachegate hash-key)")
        return keys
