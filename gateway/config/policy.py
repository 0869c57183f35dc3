"""The per-request policy: global defaults, overridden per model, then per tenant."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway.config.compaction import CompactionConfig
from gateway.config.guard import GuardConfig
from gateway.config.mcp import McpAccess
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.config.response_cache import ResponseCacheConfig


class PolicyConfig(BaseModel):
    guard: GuardConfig = Field(default_factory=GuardConfig)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    response_cache: ResponseCacheConfig = Field(default_factory=ResponseCacheConfig)
    prompt_cache: PromptCacheConfig = Field(default_factory=PromptCacheConfig)
    mcp: McpAccess = Field(default_factory=McpAccess)  # which MCP servers and tools (gateway/mcp/)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def effective_policy(base: PolicyConfig, *overrides: dict[str, Any]) -> PolicyConfig:
    """Apply overrides in order (model, then tenant); later ones win."""
    data = base.model_dump()
    for override in overrides:
        if override:
            data = deep_merge(data, override)
    return PolicyConfig.model_validate(data)
