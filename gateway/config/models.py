"""Model routing: the public model name a client asks for -> a provider model and how to reach it."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field

from gateway.config.prices import PriceConfig

# Providers whose wire format the lean path speaks; any other LiteLLM provider goes through LiteLLM.
LEAN_WIRE_BY_PROVIDER: dict[str, str] = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini"}

# The api_base placeholder for the simulator mounted in the gateway's own process (embedded default).
EMBEDDED_SIM_BASE = "embedded-sim"


class ModelConfig(BaseModel):
    """One routable model."""

    name: str = Field(description="Public model name clients send")
    provider: str = Field(description="LiteLLM provider: openai, anthropic, bedrock, gemini, ...")
    model: str = Field(description="Provider model id")
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="Env var holding the upstream key")
    timeout_s: float = 60.0
    retries: int = 2
    fallbacks: list[str] = Field(default_factory=list, description="Public names tried after retries")
    path: Literal["auto", "lean", "litellm"] = "auto"
    pricing_model: str | None = Field(default=None, description="Cost-map key if not provider/model")
    prices: PriceConfig | None = Field(
        default=None, description="This deployment's list prices, over the price table and LiteLLM's map"
    )
    context_window: int | None = Field(default=None, description="Override of LiteLLM's max_input_tokens")
    policy: dict[str, Any] = Field(default_factory=dict, description="Per-model policy overrides")
    # Deployment pools (docs/pools.md): entries with the same `name` are one pool of deployments.
    deployment_id: str | None = Field(
        default=None, max_length=64, description="This deployment's id in its pool (records, metrics); default name#n"
    )
    region: str | None = Field(default=None, description="Where this deployment runs (shown in records)")
    weight: float = Field(default=1.0, gt=0, description="Share of new sessions, before headroom")
    priority: int = Field(default=0, description="Lower first: a pool uses its lowest priority that can answer")
    rpm: int | None = Field(default=None, gt=0, description="Requests a minute this deployment may take")
    tpm: int | None = Field(default=None, gt=0, description="Input tokens a minute this deployment may take")
    cache_ttl_s: float | None = Field(
        default=None, gt=0, description="How long the provider keeps a prompt-cache prefix; default by provider"
    )

    @property
    def lean_wire(self) -> str | None:
        return LEAN_WIRE_BY_PROVIDER.get(self.provider)

    @property
    def litellm_model(self) -> str:
        return f"{self.provider}/{self.model}"

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None
