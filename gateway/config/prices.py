"""List prices for one model, in USD per million tokens: a route's `prices:` override and the entries of the
shipped price table (gateway/usage/prices.yaml) share this shape."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PriceConfig(BaseModel):
    """Rates a provider bills; the cache rates default to the input rate (5m writes) and the 5m rate (1h)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="USD per million uncached input tokens")
    output: float = Field(ge=0, description="USD per million output tokens (reasoning/thinking included)")
    cache_read: float | None = Field(default=None, ge=0, description="USD per million cache-read tokens")
    cache_write_5m: float | None = Field(default=None, ge=0, description="USD per million 5-minute cache writes")
    cache_write_1h: float | None = Field(default=None, ge=0, description="USD per million 1-hour cache writes")
    web_search_per_1k: float = Field(default=0.0, ge=0, description="USD per 1,000 server-side web searches")
    above_200k: PriceConfig | None = Field(
        default=None, description="Rates for every token of a prompt over 200,000 tokens (Gemini Pro's tiers)"
    )
