"""Which configured route a reply is billed as when the request let the provider answer with another model.

Anthropic's server-side `fallbacks` chain (checked in wire/server_tools.py to name only configured models)
lets the provider answer with a model of the chain instead of the one requested. Pricing such a reply at
the requested route's rates would let a cheap route carry an expensive model's tokens past a budget, so a
reply whose `model` is one the chain named is billed as the configured route of that model. Without a chain
the requested route prices the reply (a provider may name a dated snapshot of the requested model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gateway.config.models import ModelConfig


def served_route(
    route: ModelConfig, chain: Any, response: Mapping[str, Any], models: Sequence[ModelConfig]
) -> ModelConfig:
    """The route of `models` whose model answered `response` if `chain` (a request's fallback list) named
    it, else `route`."""
    answered = response.get("model")
    if not isinstance(chain, list) or not isinstance(answered, str) or answered == route.model:
        return route
    if not any(isinstance(entry, dict) and entry.get("model") == answered for entry in chain):
        return route
    for model in models:
        if model.provider == route.provider and model.model == answered:
            return model
    return route
