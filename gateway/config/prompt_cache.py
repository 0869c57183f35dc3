"""Prompt-cache optimizer policy (stage: gateway/stages/prompt_cache.py; logic: gateway/prompt_cache/).

Every field can be overridden per model (`models[].policy.prompt_cache`) and per tenant
(`tenants[].policy.prompt_cache`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

CacheStyleSetting = Literal["auto", "anthropic", "openai", "gemini", "none"]
TtlSetting = Literal["auto", "5m", "1h"]


class PromptCacheConfig(BaseModel):
    enabled: bool = True
    style: CacheStyleSetting = Field(
        default="auto", description="How the provider caches; auto: decided from the route's provider and model"
    )
    # Anthropic-style explicit breakpoints (Anthropic, Bedrock, Vertex Claude, DashScope).
    breakpoints: bool = True
    max_breakpoints: int = Field(default=4, ge=1, description="Provider limit, the client's own marks included")
    lookback_blocks: int = Field(default=20, ge=1, description="Blocks a breakpoint looks back for an entry")
    intermediate_every_blocks: int = Field(
        default=15, ge=1, description="A turn adding more blocks than this gets intermediate marks"
    )
    min_tokens: int | None = Field(
        default=None, description="Smallest cacheable prefix; None: LiteLLM's prompt_cache_min_tokens (else 1024)"
    )
    ttl: TtlSetting = Field(default="auto", description="auto: from the gap between the session's requests")
    ttl_5m_max_gap_s: float = Field(default=240.0, description="Gaps up to this keep 5m entries alive")
    ttl_1h_max_gap_s: float = Field(default=3300.0, description="Gaps up to this pay for 1h entries")
    skip_unstable_prefix: bool = Field(
        default=True, description="No marks while tools/system change on every request (writes never read)"
    )
    # OpenAI-style automatic caching.
    prompt_cache_key: bool = Field(default=True, description="Send the agent session as prompt_cache_key")
    key_providers: list[str] = Field(
        default_factory=lambda: ["openai"], description="Providers that accept prompt_cache_key / retention"
    )
    retention: Literal["in_memory", "24h"] | None = Field(
        default=None, description="prompt_cache_retention sent to key_providers (None: provider default)"
    )
    # Gemini: LiteLLM turns cache_control marks into billed explicit cachedContents.
    gemini_explicit_cache: bool = Field(
        default=False, description="Let client cache_control marks reach Gemini (creates billed caches)"
    )
    # Prefix stability.
    canonical_tools: bool = Field(
        default=True, description="Tool schemas with sorted keywords (property order kept), tools sorted by name"
    )
    relocate_volatile: bool = Field(
        default=False, description="Move timestamps/dates/UUIDs/request ids out of the system prompt to the end"
    )
    session_state_ttl_s: float = Field(default=7200.0, description="How long a session's prefix record is kept")
