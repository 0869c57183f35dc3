"""Tool-call rate limits and budgets of a key and of its tenant (``policy.mcp.key_limits`` and
``.tenant_limits``, gateway/config/mcp_limits.py), in the shared state store, so every replica counts
the same calls (memory: one replica's; Redis: all of them).

The rate is a sliding window of the last 60 s (the store's `admit`, all windows at once or none). A
budget is a count of calls per UTC day, UTC month or lifetime, in the budget windows of the model side
(gateway/governance/budgets.py): the call holds one call on every budget, all or none, atomically, and
settles it at once, so concurrent calls on any replica never pass a budget. A call refused by a budget
gives back its place in the rate windows. A refusal is an MCP error (TOOL_CALLS_LIMITED) the clients
show to the model as the tool call's error, like the guard's stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from mcp.shared.exceptions import MCPError

from gateway.config.mcp_limits import ToolCallBudget, ToolCallLimits
from gateway.governance.budgets import bucket, counter_ttl_s
from gateway.mcp.errors import TOOL_CALLS_LIMITED
from gateway.mcp.records import ToolCall
from gateway.state.base import Meter, StateStore, Window

MINUTE_S = 60.0
HOLD_LEASE_S = 60.0  # a call settles its hold at once; a replica that died in between frees it after this


@dataclass(frozen=True, slots=True)
class _Scope:
    name: str  # "key" or "tenant", for messages
    key: str  # its counters' key prefix
    limits: ToolCallLimits


def _scopes(call: ToolCall) -> list[_Scope]:
    access, caller = call.caller.policy.mcp, call.caller
    base = f"mcp-limits:{{{caller.tenant}}}"  # the tenant in a hash tag: one Redis Cluster slot per call
    found = [_Scope("key", f"{base}:key:{caller.identity.id}", access.key_limits)]
    found.append(_Scope("tenant", f"{base}:tenant", access.tenant_limits))
    return [scope for scope in found if scope.limits.any]


def _refused(message: str, data: dict[str, object]) -> MCPError:
    return MCPError(TOOL_CALLS_LIMITED, message, data)


class CallLimits:
    def __init__(self, store: StateStore) -> None:
        self.store = store

    async def admit(self, call: ToolCall) -> None:
        """Count the call against its key's and tenant's limits; an MCP error when one is reached (the
        call's outcome says which)."""
        access = call.caller.policy.mcp
        if not (access.key_limits.any or access.tenant_limits.any):  # the common case: nothing to count
            return
        scopes = _scopes(call)
        windows = [
            (scope, Window(f"{scope.key}:rpm", scope.limits.calls_per_minute, MINUTE_S))
            for scope in scopes
            if scope.limits.calls_per_minute is not None
        ]
        if windows:
            wait = await self.store.admit([window for _, window in windows], call.id)
            if wait > 0:
                limits = " or ".join(f"the {scope.name}'s {scope.limits.calls_per_minute}" for scope, _ in windows)
                call.outcome, call.error_code = "rate_limited", "rate_limit_exceeded"
                raise _refused(
                    f"Tool-call rate limit reached ({limits} calls per minute). Retry in {wait:.1f} s.",
                    {"type": "rate_limit_exceeded", "retry": True, "retry_after_s": round(wait, 1)},
                )
        await self._budgets(call, scopes, [window.key for _, window in windows])

    async def _budgets(self, call: ToolCall, scopes: list[_Scope], rate_keys: list[str]) -> None:
        now = datetime.now(UTC)
        lines: list[tuple[_Scope, ToolCallBudget, Meter]] = []
        for scope in scopes:
            for budget in scope.limits.budgets:
                bucket_id, resets_at = bucket(budget.window, now)
                counter = f"{scope.key}:budget:{budget.window}:{bucket_id}"
                meter = Meter(
                    f"{counter}:holds", budget.calls, HOLD_LEASE_S, f"{counter}:calls", counter_ttl_s(resets_at, now)
                )
                lines.append((scope, budget, meter))
        if not lines:
            return
        meters, ones = [meter for _, _, meter in lines], [1.0] * len(lines)
        held = await self.store.hold(meters, call.id, ones)
        if held.refused is None:
            await self.store.settle(meters, call.id, ones)
            return
        if rate_keys:
            await self.store.leave(rate_keys, call.id)
        scope, budget, _ = lines[held.refused]
        resets_at = bucket(budget.window, now)[1]
        call.outcome, call.error_code = "budget_exceeded", "tool_call_budget"
        window = "lifetime" if budget.window == "lifetime" else f"per {budget.window}"
        raise _refused(
            f"Tool-call budget reached (the {scope.name}'s {budget.calls} calls {window}).",
            {
                "type": "tool_call_budget_exceeded",
                "retry": False,
                "resets_at": resets_at.isoformat() if resets_at else None,
            },
        )
