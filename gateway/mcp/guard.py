"""The loop guard at the tool layer: MCP tool calls feed the same per-session state as the model side.

A tool call is judged as it happens, with its result: the session's last tool calls seen here (stored,
as the MCP endpoint gets no history) plus this one become steps for ``agent_runtime.guard.evaluate``,
against the session's strikes from both sides (gateway/guard/state.py). The ladder is the guard's own:
a NUDGE is appended to the tool result for the model, a STOP ends the call with an MCP error, and the
strike it leaves blocks the session on both sides: later tool calls are refused here, and the model
side's check refuses its next request (gateway/stages/guard.py reads the same strikes).

Positions: a strike's position is the session's request number. A tool call takes the position after
the session's model calls and tool calls so far (``calls`` + ``mcp.calls``), so its strikes escalate
in order with each other and come after the model calls that led to them.

A session-less call is not judged (no state could tell a repeat); a store failure lets the call through
(counted), as on the model side.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson

from agent_runtime.guard import Action, Decision, GuardPolicy, Step, StepKind, Strike, escalate, evaluate
from gateway.config.guard import GuardConfig
from gateway.guard.policy import PolicyCache
from gateway.guard.state import (
    COUNTERS,
    GuardSessions,
    decision_record,
    is_blocked,
    session_prefix,
    unique_strikes,
)
from gateway.state import Op, StateStore, incr_fields

STEPS = "mcp.steps"  # the session's last tool calls seen at the MCP endpoint (hashes only, as JSON)
CALLS = "mcp.calls"  # how many tool calls the MCP endpoint saw in the session (a field of the counters)


@dataclass(eq=False)
class ToolSession:
    """One tool call's view of its session, read before the call."""

    prefix: str
    policy: GuardPolicy
    position: int
    strikes: list[Strike]
    steps: list[Step]


def _encode(step: Step) -> bytes:
    return orjson.dumps(
        {
            "kind": step.kind.value,
            "tool": step.tool,
            "args": step.args_hash,
            "result": step.result_hash,
            "error": step.is_error,
            "summary": step.summary,
            "waits": step.waits,
            "changes": step.changes,
            "at": step.at,
        }
    )


def _decode(raw: bytes) -> Step:
    data: dict[str, Any] = orjson.loads(raw)
    return Step(
        kind=StepKind(data["kind"]),
        tool=data["tool"],
        args_hash=data["args"],
        result_hash=data["result"],
        is_error=bool(data["error"]),
        summary=data["summary"],
        waits=bool(data["waits"]),
        changes=bool(data["changes"]),
        at=data["at"],
    )


class ToolGuard:
    def __init__(self, store: StateStore, ttl_s: float) -> None:
        self.store, self.ttl_s = store, ttl_s
        self.sessions = GuardSessions(store, ttl_s)
        self.policies = PolicyCache()

    async def open(self, tenant: str, session_id: str | None, config: GuardConfig) -> ToolSession | None:
        """The session's strikes and tool steps, in one round trip; counts this tool call. None: not judged."""
        policy = self.policies.get(config, None)
        if session_id is None or not policy.enabled:
            return None
        prefix = session_prefix(tenant, session_id)
        counted = incr_fields(prefix + COUNTERS, {"calls": 0, CALLS: 1}, self.ttl_s)
        strikes, counters, steps = await self.store.batch(
            [Op("range", prefix + "strikes"), counted, Op("range", prefix + STEPS)]
        )
        return ToolSession(
            prefix,
            policy,
            int(counters["calls"]) + int(counters[CALLS]),
            unique_strikes(strikes),
            [_decode(raw) for raw in steps],
        )

    @staticmethod
    def refusal(session: ToolSession) -> Decision | None:
        """The block of a session stopped earlier, on either side (None: not blocked)."""
        if not is_blocked(session.strikes):
            return None
        after = max(strike.position for strike in session.strikes) + 1
        decision = escalate(None, session.strikes, max(session.position, after), session.policy)
        return decision if decision.action is Action.BLOCK else None

    async def judge(self, session: ToolSession, step: Step) -> Decision:
        """The call with its result: stored as the session's latest step, then judged with the ones before."""
        keep = session.policy.lookback_steps
        steps = [*session.steps[-(keep - 1) :], step] if keep > 1 else [step]
        decision = evaluate(steps, None, session.policy, session.strikes, position=session.position)
        writes = [self.store.push(session.prefix + STEPS, _encode(step), max_len=keep, ttl_s=self.ttl_s)]
        if decision.action is not Action.CONTINUE and decision.detection is not None:
            await self.remember(session, decision, writes)
        else:
            await asyncio.gather(*writes)
        return decision

    async def remember(self, session: ToolSession, decision: Decision, writes: list[Any] | None = None) -> None:
        """The decision in the session's history (the admin view) and its strike (both sides escalate on it)."""
        pending = [
            *(writes or []),
            self.sessions.decision(session.prefix, decision_record(decision, session.position, "tool")),
        ]
        if decision.strike is not None:
            session.strikes.append(decision.strike)
            pending.append(self.sessions.strike(session.prefix, decision.strike, f"tool-{session.position}"))
        await asyncio.gather(*pending)
