"""Cost in USD from LiteLLM's model cost map, priced per token kind.

We price the normalised Usage ourselves from the map's per-token fields instead of calling
`litellm.completion_cost`, which has billed cache reads and 1h writes at the wrong rates
(BerriAI/litellm #11789, #6215, #29432) and costs milliseconds per call on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gateway.usage.tokens import Usage


@dataclass(frozen=True, slots=True)
class Price:
    """USD per token for each kind of token."""

    input: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    output: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.uncached_input * self.input
            + usage.cache_read * self.cache_read
            + usage.cache_write_5m * self.cache_write_5m
            + usage.cache_write_1h * self.cache_write_1h
            + usage.output * self.output
        )

    def cost_without_caching(self, usage: Usage) -> float:
        """What the same tokens would have cost with no prompt caching at all."""
        return usage.input_total * self.input + usage.output * self.output


FREE = Price(0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Cost:
    usd: float
    uncached_usd: float

    @property
    def saved_usd(self) -> float:
        """Negative when cache-write premiums outweighed the reads."""
        return self.uncached_usd - self.usd

    @classmethod
    def of(cls, usage: Usage, price: Price) -> Cost:
        return cls(usd=price.cost(usage), uncached_usd=price.cost_without_caching(usage))


def _entry(model_key: str) -> dict[str, object] | None:
    import litellm

    entry = litellm.model_cost.get(model_key)
    if entry is None and "/" in model_key:
        entry = litellm.model_cost.get(model_key.split("/", 1)[1])
    return entry or None


@lru_cache(maxsize=512)
def price_for(model_key: str) -> Price:
    """Price for a cost-map key ('gpt-4o-mini', 'anthropic/claude-sonnet-4-5', ...); FREE if unknown."""
    entry = _entry(model_key)
    if not entry:
        return FREE

    def rate(name: str, default: float) -> float:
        value = entry.get(name)
        return float(value) if isinstance(value, int | float) and value else default

    base = rate("input_cost_per_token", 0.0)
    write_5m = rate("cache_creation_input_token_cost", base)
    return Price(
        input=base,
        cache_read=rate("cache_read_input_token_cost", base),
        cache_write_5m=write_5m,
        cache_write_1h=rate("cache_creation_input_token_cost_above_1hr", write_5m),
        output=rate("output_cost_per_token", 0.0),
    )


@lru_cache(maxsize=512)
def max_output_for(model_key: str) -> int | None:
    """The model's most output tokens per answer in the cost map (None: unknown)."""
    entry = _entry(model_key) or {}
    value = entry.get("max_output_tokens") or entry.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None
