"""Spend and rate limits, on a tenant or on one of its keys (docs/governance.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

BudgetWindow = Literal["day", "month", "lifetime"]


class Budget(BaseModel):
    """A spend limit over a rolling window: USD (the cost figures of the response headers, compaction's
    summary calls included) and/or tokens. Past `soft_fraction` of it requests are flagged; at the limit
    they are refused until the window frees room."""

    window: BudgetWindow
    usd: float | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    soft_fraction: float = Field(default=0.8, gt=0, le=1)


class Limits(BaseModel):
    budgets: list[Budget] = Field(default_factory=list, description="Spend limits of the tenant or key")
    session_budgets: list[Budget] = Field(default_factory=list, description="Spend limits of each agent session")
    requests_per_minute: int | None = Field(default=None, gt=0)
    tokens_per_minute: int | None = Field(default=None, gt=0)
    concurrent_requests: int | None = Field(default=None, gt=0)
