"""Cost in USD, priced per token kind: a route's own `prices`, else our price table
(gateway/usage/prices.yaml), else LiteLLM's model cost map, else the table's fallback rates, marked listed=False.

We price the normalised Usage ourselves from the map's per-token fields instead of calling
`litellm.completion_cost`, which has billed cache reads and 1h writes at the wrong rates
(BerriAI/litellm #11789, #6215, #29432) and costs milliseconds per call on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gateway.config.models import ModelConfig
from gateway.config.prices import PriceConfig
from gateway.usage.tokens import Usage

PRICE_TABLE = Path(__file__).resolve().parent / "prices.yaml"
PER_MILLION = 1_000_000
LONG_PROMPT_TOKENS = 200_000  # above it some models bill every token of the request at higher rates
ANTHROPIC_WEB_SEARCH_USD = 0.01  # docs.anthropic.com/en/docs/about-claude/pricing: $10 per 1,000 searches


@dataclass(frozen=True, slots=True)
class Price:
    """USD per token for each kind of token, and per server-side web search."""

    input: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    output: float
    web_search: float = 0.0
    listed: bool = True  # False: the model is priced nowhere, these are the fallback rates
    above_200k: Price | None = None  # the rates for a prompt over LONG_PROMPT_TOKENS, where they differ

    def for_prompt(self, prompt_tokens: int) -> Price:
        """The rates a request with this many prompt tokens (cached included) is billed at."""
        return self.above_200k if self.above_200k is not None and prompt_tokens > LONG_PROMPT_TOKENS else self

    def cost(self, usage: Usage) -> float:
        return (
            usage.uncached_input * self.input
            + usage.cache_read * self.cache_read
            + usage.cache_write_5m * self.cache_write_5m
            + usage.cache_write_1h * self.cache_write_1h
            + usage.output * self.output
            + usage.web_search_requests * self.web_search
        )

    def cost_without_caching(self, usage: Usage) -> float:
        """What the same tokens would have cost with no prompt caching at all."""
        return usage.input_total * self.input + usage.output * self.output + usage.web_search_requests * self.web_search

    @classmethod
    def from_config(cls, config: PriceConfig, *, listed: bool = True) -> Price:
        write_5m = config.input if config.cache_write_5m is None else config.cache_write_5m
        return cls(
            input=config.input / PER_MILLION,
            cache_read=(config.input if config.cache_read is None else config.cache_read) / PER_MILLION,
            cache_write_5m=write_5m / PER_MILLION,
            cache_write_1h=(write_5m if config.cache_write_1h is None else config.cache_write_1h) / PER_MILLION,
            output=config.output / PER_MILLION,
            web_search=config.web_search_per_1k / 1000,
            listed=listed,
            above_200k=cls.from_config(config.above_200k, listed=listed) if config.above_200k else None,
        )


@dataclass(frozen=True, slots=True)
class Cost:
    usd: float
    uncached_usd: float
    estimated: bool = False  # some tokens were priced at the fallback rates (an unpriced model)

    @property
    def saved_usd(self) -> float:
        """Negative when cache-write premiums outweighed the reads."""
        return self.uncached_usd - self.usd

    @classmethod
    def of(cls, usage: Usage, price: Price) -> Cost:
        """Every billed part: the answering model's tokens at `price`, sub-steps run on other models (an
        advisor) at theirs."""
        own = usage.own_model()
        rates = price.for_prompt(own.input_total)
        usd, uncached_usd, estimated = rates.cost(own), rates.cost_without_caching(own), not price.listed
        for model, part in usage.other_models:
            other = price_for(model).for_prompt(part.input_total)
            usd += other.cost(part)
            uncached_usd += other.cost_without_caching(part)
            estimated = estimated or not other.listed
        return cls(usd=usd, uncached_usd=uncached_usd, estimated=estimated)


def _entry(model_key: str) -> dict[str, object] | None:
    import litellm

    entry = litellm.model_cost.get(model_key)
    if entry is None and "/" in model_key:
        entry = litellm.model_cost.get(model_key.split("/", 1)[1])
    return entry or None


def _read_price_table() -> tuple[dict[str, PriceConfig], PriceConfig]:
    """The shipped table's models and fallback rates."""
    raw: dict[str, Any] = yaml.safe_load(PRICE_TABLE.read_text())
    models = {key: PriceConfig.model_validate(entry) for key, entry in (raw.get("models") or {}).items()}
    return models, PriceConfig.model_validate(raw["fallback"])


TABLE, FALLBACK = _read_price_table()  # at import: a broken table stops the gateway from starting


def route_price(route: ModelConfig) -> Price:
    """What a route's tokens cost: its own `prices`, else its cost-map key's."""
    if route.prices is not None:
        return Price.from_config(route.prices)
    return price_for(route.pricing_model or route.litellm_model)


@lru_cache(maxsize=512)
def price_for(model_key: str) -> Price:
    """Price for a cost-map key ('gpt-4o-mini', 'anthropic/claude-sonnet-4-5', ...): the price table's, else
    LiteLLM's; a model priced in neither gets the table's fallback rates with listed=False."""
    listed = TABLE.get(model_key) or TABLE.get(model_key.split("/", 1)[-1])
    if listed is not None:
        return Price.from_config(listed)
    entry = _entry(model_key)
    if not entry or not isinstance(entry.get("input_cost_per_token"), int | float):
        return Price.from_config(FALLBACK, listed=False)

    def rate(name: str, default: float) -> float:
        value = entry.get(name)
        return float(value) if isinstance(value, int | float) and value else default

    base = rate("input_cost_per_token", 0.0)
    write_5m = rate("cache_creation_input_token_cost", base)
    price = Price(
        input=base,
        cache_read=rate("cache_read_input_token_cost", base),
        cache_write_5m=write_5m,
        cache_write_1h=rate("cache_creation_input_token_cost_above_1hr", write_5m),
        output=rate("output_cost_per_token", 0.0),
        web_search=_search_rate(entry),
    )
    long_input = rate("input_cost_per_token_above_200k_tokens", 0.0)
    if not long_input:
        return price
    long_rates = Price(
        input=long_input,
        cache_read=rate("cache_read_input_token_cost_above_200k_tokens", price.cache_read),
        cache_write_5m=price.cache_write_5m,
        cache_write_1h=price.cache_write_1h,
        output=rate("output_cost_per_token_above_200k_tokens", price.output),
        web_search=price.web_search,
    )
    return replace(price, above_200k=long_rates)


def _search_rate(entry: dict[str, object]) -> float:
    """USD per server-side search: the map's `search_context_cost_per_query` (the same at every size for the
    providers that bill per search), else Anthropic's rate for every Claude model the map gives none."""
    per_query = entry.get("search_context_cost_per_query")
    value = per_query.get("search_context_size_medium") if isinstance(per_query, dict) else None
    if isinstance(value, int | float):
        return float(value)
    provider = str(entry.get("litellm_provider") or "")
    return ANTHROPIC_WEB_SEARCH_USD if provider in ("anthropic", "vertex_ai-anthropic_models") else 0.0


@lru_cache(maxsize=512)
def max_output_for(model_key: str) -> int | None:
    """The model's most output tokens per answer in the cost map (None: unknown)."""
    entry = _entry(model_key) or {}
    value = entry.get("max_output_tokens") or entry.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None
