"""Which caching scheme a route's provider uses (see shared/specs/provider-caching.md)."""

from __future__ import annotations

from enum import StrEnum

from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig


class CacheStyle(StrEnum):
    ANTHROPIC = "anthropic"  # explicit cache_control breakpoints
    OPENAI = "openai"  # automatic prefix caching, optional routing key
    GEMINI = "gemini"  # implicit caching; explicit caches are billed objects
    NONE = "none"


# LiteLLM provider names whose models take Anthropic-style cache_control marks.
ANTHROPIC_STYLE = {"anthropic", "bedrock", "bedrock_converse", "dashscope"}
GEMINI_STYLE = {"gemini", "vertex_ai", "vertex_ai_beta"}
OPENAI_STYLE = {"openai", "azure", "deepseek", "groq", "xai", "mistral", "text-completion-openai"}


def cache_style(route: ModelConfig, config: PromptCacheConfig) -> CacheStyle:
    if config.style != "auto":
        return CacheStyle(config.style)
    provider = route.provider
    if provider in ANTHROPIC_STYLE:
        return CacheStyle.ANTHROPIC
    if provider in GEMINI_STYLE:
        # Vertex serves Claude too; those models follow Anthropic's rules.
        return CacheStyle.ANTHROPIC if "claude" in route.model else CacheStyle.GEMINI
    if provider in OPENAI_STYLE:
        return CacheStyle.OPENAI
    return CacheStyle.NONE
