"""The model's smallest cacheable prefix, from LiteLLM's model cost map (`prompt_cache_min_tokens`)."""

from __future__ import annotations

from functools import lru_cache

from gateway.config import ModelConfig

DEFAULT_MIN_TOKENS = 1024


@lru_cache(maxsize=256)
def _lookup(*keys: str) -> int:
    import litellm

    for key in keys:
        entry = litellm.model_cost.get(key)
        if entry and entry.get("prompt_cache_min_tokens"):
            return int(entry["prompt_cache_min_tokens"])
    return DEFAULT_MIN_TOKENS


def min_cacheable_tokens(route: ModelConfig) -> int:
    keys = [route.pricing_model, route.litellm_model, route.model]
    return _lookup(*(key for key in keys if key))
