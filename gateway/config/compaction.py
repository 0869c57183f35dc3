"""Context compaction / summarization policy (stage: gateway/stages/compaction.py)."""

from __future__ import annotations

from pydantic import BaseModel


class CompactionConfig(BaseModel):
    enabled: bool = True
