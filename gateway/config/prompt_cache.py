"""Prompt-cache optimizer policy (stage: gateway/stages/prompt_cache.py)."""

from __future__ import annotations

from pydantic import BaseModel


class PromptCacheConfig(BaseModel):
    enabled: bool = True
