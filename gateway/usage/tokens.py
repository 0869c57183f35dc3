"""One usage shape for every provider (see shared/specs/provider-caching.md, 'usage fields')."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """Input split by how the provider billed it; all fields are token counts."""

    uncached_input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

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
            output=int(usage.get("completion_tokens") or 0),
        )

    @classmethod
    def from_openai_responses(cls, usage: dict[str, Any] | None) -> Usage:
        """OpenAI Responses shape; `input_tokens` includes the cached tokens and, as LiteLLM's Responses
        bridge reports other providers, the written ones (`input_tokens_details.cache_write_tokens`)."""
        if not usage:
            return cls()
        details = usage.get("input_tokens_details") or {}
        read = int(details.get("cached_tokens") or 0)
        written = int(details.get("cache_write_tokens") or 0)
        return cls(
            uncached_input=max(int(usage.get("input_tokens") or 0) - read - written, 0),
            cache_read=read,
            cache_write_5m=written,
            output=int(usage.get("output_tokens") or 0),
        )

    @classmethod
    def from_anthropic(cls, usage: dict[str, Any] | None) -> Usage:
        """Anthropic shape; `input_tokens` is the UNCACHED part only."""
        if not usage:
            return cls()
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
