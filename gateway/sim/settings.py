"""Configuration of the provider simulator."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field


class FaultKind(StrEnum):
    """Failures the simulator can inject (names used in directives, headers and /sim/faults)."""

    RATE_LIMIT = "429"
    SERVER_ERROR = "500"
    OVERLOADED = "529"
    TIMEOUT = "timeout"
    MALFORMED_STREAM = "malformed_stream"
    DISCONNECT = "disconnect"


class LatencySettings(BaseModel):
    """Latency model: TTFT grows with uncached input, decode time with output; all times x `scale`."""

    scale: float = 0.0  # 0 in tests: answers are immediate
    base_ttft_s: float = 0.25
    per_uncached_input_token_s: float = 0.00012  # ~1.2 s extra TTFT for 10K uncached tokens
    cached_token_cost_ratio: float = 0.1  # a cached input token costs 10x less prefill time
    per_output_token_s: float = 0.012  # ~80 tokens/s decode


class RateLimitSettings(BaseModel):
    """Rate limits per key and model, answered with the providers' headers (gateway/sim/rate_limits.py)."""

    rpm: int | None = Field(default=None, gt=0)  # requests a minute; None: unlimited
    tpm: int | None = Field(default=None, gt=0)  # input tokens a minute (Anthropic: cache reads excluded)


class SimSettings(BaseModel):
    """Everything that shapes the simulator's behaviour; the defaults suit fast tests."""

    latency: LatencySettings = Field(default_factory=LatencySettings)
    # Per-model fault probabilities, e.g. {"gpt-4o-mini": {"429": 0.1}}; the model "*" matches all.
    fault_rates: dict[str, dict[FaultKind, float]] = Field(default_factory=dict)
    fault_seed: int = 0
    retry_after_s: float = 1.0  # sent as retry-after / retry-after-ms on 429
    rate_limits: RateLimitSettings = Field(default_factory=RateLimitSettings)  # off by default
    timeout_fault_s: float = 60.0  # how long a `timeout` fault stalls before answering 504
    replay_file: Path | None = None  # .jsonl(.gz) agent traces answered turn by turn
    require_key: str | None = None  # None: any key (or none) is accepted
    openai_in_memory_ttl_s: float = 600.0  # idle TTL of OpenAI's default in-memory cache
    openai_extended_ttl_s: float = 86400.0  # prompt_cache_retention="24h"
    anthropic_min_tokens: dict[str, int] = Field(default_factory=dict)  # overrides LiteLLM's cost map
    models: list[str] = Field(
        default_factory=lambda: [
            "gpt-4o-mini",
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-5-mini",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-5",
        ]
    )
    stream_chunk_words: int = 3  # words per streamed text delta
    # Off by default: the log holds every caller's prompts. Tests that inspect what reached the provider
    # turn it on and read it with GET /sim/requests (admin key).
    record_requests: bool = False
    recent_requests_kept: int = 200  # request bodies kept for GET /sim/requests
    # Hashed keys ('sha256:<hex>', like the gateway's admin_keys) that may use the control endpoints
    # (/sim/stats, /sim/requests, /sim/reset, /sim/faults). Empty: the controls answer 403 to everyone.
    admin_key_hashes: list[str] = Field(default_factory=list)

    @classmethod
    def realistic(cls, **overrides: object) -> SimSettings:
        """Provider-like latency for benchmarks and the demo."""
        return cls.model_validate({"latency": LatencySettings(scale=1.0), **overrides})
