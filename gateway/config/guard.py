"""Loop-guard policy (stage: gateway/stages/guard.py)."""

from __future__ import annotations

from pydantic import BaseModel


class GuardConfig(BaseModel):
    enabled: bool = True
