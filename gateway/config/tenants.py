"""Tenants and their virtual API keys (stored as SHA-256 hashes, never in clear), and their own provider
keys: a tenant with its own key never shares the provider's prompt cache with other tenants."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

from gateway.config.limits import Limits
from gateway.config.models import ModelConfig

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class TenantConfig(BaseModel):
    name: str
    keys: list[str] = Field(default_factory=list, description="Hashed keys: 'sha256:<hex>'")
    policy: dict[str, Any] = Field(default_factory=dict, description="Per-tenant policy overrides")
    allowed_models: list[str] | None = Field(
        default=None, description="Route names this tenant may use (checked after alias resolution); None: all"
    )
    model_aliases: dict[str, str] = Field(
        default_factory=dict, description="Like Settings.model_aliases, read before the global map"
    )
    limits: Limits = Field(default_factory=Limits, description="The tenant's budgets and rate limits (all its keys)")
    record_content: bool = Field(
        default=False,
        description="Request records also keep the request and response bodies (each cut at 32 KB); "
        "off: records hold no content",
    )
    provider_keys: dict[str, str] = Field(
        default_factory=dict,
        description="Env var of this tenant's own upstream key, by model name or provider "
        "({'openai': 'ACME_OPENAI_KEY', 'claude-sonnet-4-5': 'ACME_CLAUDE_KEY'}); the model name wins. "
        "Other routes use the model's shared api_key_env. See docs/security.md (prompt-cache side channel)",
    )

    fallbacks: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Pools tried once a model's own pool is exhausted, by model name, for this tenant "
        "(in place of the model's `fallbacks`; docs/pools.md)",
    )

    @field_validator("keys")
    @classmethod
    def _hashed(cls, keys: list[str]) -> list[str]:
        for key in keys:
            if not key.startswith("sha256:") or len(key) != 71:
                raise ValueError("tenant keys must be stored hashed: 'sha256:<64 hex>' (cachegate hash-key)")
        return keys

    @field_validator("provider_keys")
    @classmethod
    def _env_names(cls, keys: dict[str, str]) -> dict[str, str]:
        for env in keys.values():
            if not ENV_NAME.fullmatch(env):
                raise ValueError("provider_keys values name environment variables (the keys never go in config)")
        return keys

    def key_env_for(self, route: ModelConfig) -> str | None:
        return self.provider_keys.get(route.name) or self.provider_keys.get(route.provider)


class TenantRoute(ModelConfig):
    """A route as one tenant calls it: with the tenant's own key where it has one. The tenant's keys
    travel with it so that every route called on its behalf (fallbacks, summaries) uses them too."""

    tenant_keys: dict[str, str] = Field(default_factory=dict, exclude=True)

    def keyed(self, route: ModelConfig) -> ModelConfig:
        """`route` as this route's tenant calls it."""
        env = self.tenant_keys.get(route.name) or self.tenant_keys.get(route.provider)
        if env is None:
            return route
        return TenantRoute.model_validate({**route.model_dump(), "api_key_env": env, "tenant_keys": self.tenant_keys})


def route_for_tenant(route: ModelConfig, tenant: TenantConfig | None) -> ModelConfig:
    """The route a tenant's request takes: unchanged for a tenant without provider keys."""
    if tenant is None or not tenant.provider_keys:
        return route
    env = tenant.key_env_for(route) or route.api_key_env
    return TenantRoute.model_validate({**route.model_dump(), "api_key_env": env, "tenant_keys": tenant.provider_keys})


def same_keys(caller: ModelConfig | None, route: ModelConfig) -> ModelConfig:
    """`route` with the keys of the tenant whose request `caller` serves (a fallback, a summarizer)."""
    return caller.keyed(route) if isinstance(caller, TenantRoute) else route
