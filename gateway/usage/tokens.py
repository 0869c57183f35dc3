"""One usage shape for every provider (see shared/specs/provider-caching.md, 'usage fields')."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """Input split by how the provider billed it; all fields are token counts."""

    uncached_input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    web_search_requests: int = 0  # server-side searches, billed per request
    # The share of the tokens above billed at another model's rates (an Anthropic advisor sub-inference),
    # as (provider model id, its tokens); the counts above include it.
    other_models: tuple[tuple[str, Usage], ...] = ()

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            uncached_input=self.uncached_input + other.uncached_input,
            cache_read=self.cache_read + other.cache_read,
            cache_write_5m=self.cache_write_5m + other.cache_write_5m,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            output=self.output + other.output,
            web_search_requests=self.web_search_requests + other.web_search_requests,
            other_models=self.other_models + other.other_models,
        )

    def own_model(self) -> Usage:
        """The tokens billed at the answering model's rates: these counts less `other_models` (never below 0,
        should a provider's totals leave a sub-step out)."""
        if not self.other_models:
            return self
        parts = [part for _, part in self.other_models]
        return Usage(
            uncached_input=max(self.uncached_input - sum(p.uncached_input for p in parts), 0),
            cache_read=max(self.cache_read - sum(p.cache_read for p in parts), 0),
            cache_write_5m=max(self.cache_write_5m - sum(p.cache_write_5m for p in parts), 0),
            cache_write_1h=max(self.cache_write_1h - sum(p.cache_write_1h for p in parts), 0),
            output=max(self.output - sum(p.output for p in parts), 0),
            web_search_requests=self.web_search_requests,
        )

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def input_total(self) -> int:
        return self.uncached_input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.input_total + self.output

    @classmethod
    def from_openai(cls, usage: dict[str, Any] | None) -> Usage:
        """OpenAI Chat shape; `prompt_tokens` includes cached (and, as LiteLLM reports it, written) tokens.

        Writes appear only for providers that bill them (DashScope; Anthropic/Bedrock via LiteLLM).
        """
        if not usage:
            return cls()
        details = usage.get("prompt_tokens_details") or {}
        read = int(details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0)
        write_total = int(details.get("cache_write_tokens") or usage.get("cache_creation_input_tokens") or 0)
        write_1h = int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0)
        prompt = int(usage.get("prompt_tokens") or 0)
        return cls(
            uncached_input=max(prompt - read - write_total, 0),
            cache_read=read,
            cache_write_5m=max(write_total - write_1h, 0),
            cache_write_1h=write_1h,
            output=int(usage.get("completion_tokens") or 0),  # includes reasoning_tokens (OpenAI, LiteLLM)
            # LiteLLM carries Anthropic's server_tool_use and iterations over (their tokens already summed)
            web_search_requests=_web_searches(usage),
            other_models=tuple(
                (other, cls._anthropic_tokens(it)) for it in _iterations(usage) if (other := _other_model(it, None))
            ),
        )

    @classmethod
    def from_openai_responses(cls, usage: dict[str, Any] | None, output: list[Any] | None = None) -> Usage:
        """OpenAI Responses shape; `input_tokens` includes the cached tokens and, as LiteLLM's Responses
        bridge reports other providers, the written ones (`input_tokens_details.cache_write_tokens`).
        Web searches are billed per `web_search_call` item of the `output`, which usage does not count."""
        searches = sum(1 for item in output or () if isinstance(item, dict) and item.get("type") == "web_search_call")
        if not usage:
            return cls(web_search_requests=searches)
        details = usage.get("input_tokens_details") or {}
        read = int(details.get("cached_tokens") or 0)
        written = int(details.get("cache_write_tokens") or 0)
        return cls(
            uncached_input=max(int(usage.get("input_tokens") or 0) - read - written, 0),
            cache_read=read,
            cache_write_5m=written,
            output=int(usage.get("output_tokens") or 0),  # includes output_tokens_details.reasoning_tokens
            web_search_requests=searches,
        )

    @classmethod
    def from_anthropic(cls, usage: dict[str, Any] | None, model: str | None = None) -> Usage:
        """Anthropic shape; `input_tokens` is the UNCACHED part only.

        With `iterations` (compaction, server-tool loops, advisor calls, fallback hops) the bill is the sum of
        every iteration: the top-level counts leave out compaction and advisor steps. An iteration naming a
        model other than the answer's (`model`) is billed at that model's rates (`other_models`).
        """
        if not usage:
            return cls()
        searches = _web_searches(usage)
        iterations = _iterations(usage)
        if not iterations:
            return cls._anthropic_tokens(usage) + cls(web_search_requests=searches)
        total = cls(web_search_requests=searches)
        for iteration in iterations:
            tokens = cls._anthropic_tokens(iteration)
            other = _other_model(iteration, model)
            total += replace(tokens, other_models=((other, tokens),)) if other else tokens
        return total

    @classmethod
    def _anthropic_tokens(cls, usage: dict[str, Any]) -> Usage:
        write_total = int(usage.get("cache_creation_input_tokens") or 0)
        split = usage.get("cache_creation") or {}
        write_1h = int(split.get("ephemeral_1h_input_tokens") or 0)
        return cls(
            uncached_input=int(usage.get("input_tokens") or 0),
            cache_read=int(usage.get("cache_read_input_tokens") or 0),
            cache_write_5m=max(write_total - write_1h, 0),
            cache_write_1h=write_1h,
            output=int(usage.get("output_tokens") or 0),
        )


def _iterations(usage: dict[str, Any]) -> list[dict[str, Any]]:
    iterations = usage.get("iterations")
    return [it for it in iterations if isinstance(it, dict)] if isinstance(iterations, list) else []


def _other_model(iteration: dict[str, Any], model: str | None) -> str | None:
    """The model an iteration ran on, when it names one other than the answer's."""
    other = iteration.get("model")
    return other if isinstance(other, str) and other and other != model else None


def _web_searches(usage: dict[str, Any]) -> int:
    """`server_tool_use.web_search_requests` (Anthropic, and LiteLLM's OpenAI shape of it)."""
    server_tools = usage.get("server_tool_use")
    return int(server_tools.get("web_search_requests") or 0) if isinstance(server_tools, dict) else 0
