"""Tool-call limits at the MCP endpoint (``policy.mcp.key_limits`` and ``.tenant_limits``): a call rate
(a sliding minute) and call budgets (a count of calls per UTC day, UTC month or lifetime), counted in the
shared state store so that every replica sees the same counts (gateway/mcp/limits.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from gateway.config.limits import BudgetWindow


class ToolCallBudget(BaseModel):
    calls: int = Field(gt=0, description="Tool calls allowed in the window")
    window: BudgetWindow = Field(description="day, month (UTC calendar windows) or lifetime")


class ToolCallLimits(BaseModel):
    calls_per_minute: int | None = Field(default=None, gt=0, description="Tool calls in any 60 s")
    budgets: list[ToolCallBudget] = Field(default_factory=list, description="Tool-call counts per window")

    @property
    def any(self) -> bool:
        return self.calls_per_minute is not None or bool(self.budgets)
