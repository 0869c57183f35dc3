"""Guard caps that bind the caller's key, not only the session ids it chooses (``GuardConfig.caller``).

A session id is the caller's to choose: leaving it out or changing it would start the guard over. So a
tenant may also cap, per key:

- ``sessions_per_key``, ``sessionless_per_key``: new session ids, and requests without one, in a sliding
  window (the rate-limit primitive, ``StateStore.admit``); beyond them 429 with ``retry-after``.
- ``churn``: an *agent* is a key plus a fingerprint of its system prompt and tools. Each new conversation
  of an agent (a session's first request, and every session-less request) is counted; at
  ``churn.sessions`` within ``churn.window_s`` the agent churns, and while it does, its conversations
  share the agent's counters (LLM calls, tokens, cost: the guard's step/cost caps apply to their total)
  and its stop (a conversation of a stopped agent is stopped, or blocked where the session ladder
  blocks). Counters and the stop live for the window from the agent's first conversation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson

from agent_runtime.guard import Detection, SessionCounters, StopReason, canonical_json
from gateway.config.guard import CallerCap, CallerConfig, ChurnConfig
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.guard.state import COUNTERS
from gateway.state import Op, StateStore, incr_fields
from gateway.state.base import Window

AGENT_FIELDS = ("system", "instructions", "systemInstruction", "tools")
SYSTEM_ROLES = ("system", "developer")


def fingerprint(ctx: RequestContext) -> str:
    """The agent's system prompt and tools, whatever the API: a hash of the body's fields for them and of
    a leading system/developer message."""
    body = ctx.body
    parts = {name: body[name] for name in AGENT_FIELDS if name in body}
    history = body.get(ctx.wire.history_field)
    first = history[0] if isinstance(history, list) and history else None
    if isinstance(first, dict) and first.get("role") in SYSTEM_ROLES:
        parts["first"] = first
    return hashlib.blake2b(canonical_json(parts).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def caller_id(ctx: RequestContext) -> str:
    return ctx.key.id if ctx.key is not None else "tenant"


@dataclass(frozen=True, slots=True)
class Agent:
    prefix: str
    churning: bool
    stopped: Detection | None
    counters: SessionCounters


def _cap_error(what: str, cap: CallerCap, wait: float) -> GatewayError:
    return GatewayError(
        ErrorKind.RATE_LIMIT,
        f"Rate limit reached (this key's limit of {cap.count} {what} per {cap.window_s:g} s). Retry in {wait:.1f} s.",
        code="rate_limit_exceeded",
        retry_after=wait,
    )


@dataclass(eq=False)
class Callers:
    store: StateStore

    async def admit(self, ctx: RequestContext, caps: CallerConfig, *, new_session: bool) -> None:
        """Count a new session id or a session-less request against the key's caps (429 beyond)."""
        base = f"guard-caller:{{{ctx.tenant_label}}}:{caller_id(ctx)}"
        if ctx.session_id is None:
            cap, what, holder = caps.sessionless_per_key, "requests without a session id", ctx.request_id
        elif new_session:
            cap, what, holder = caps.sessions_per_key, "new sessions", ctx.session_id
        else:
            return
        if cap is None:
            return
        kind = "sessionless" if ctx.session_id is None else "sessions"
        wait = await self.store.admit([Window(f"{base}:{kind}", cap.count, cap.window_s)], holder)
        if wait > 0:
            raise _cap_error(what, cap, wait)

    async def open(self, ctx: RequestContext, churn: ChurnConfig, *, new_conversation: bool) -> Agent:
        """Count this request (and a new conversation) for its agent; read the agent's state."""
        prefix = f"{ctx.tenant_label}:guard-agent:{caller_id(ctx)}:{fingerprint(ctx)}:"
        steps: dict[str, int | float] = {"sessions": int(new_conversation), "calls": 1, "tokens": 0, "cost": 0.0}
        got, stopped = await self.store.batch(
            [incr_fields(prefix + COUNTERS, steps, churn.window_s), Op("get", prefix + "stopped")]
        )
        calls, tokens = int(got["calls"]), int(got["tokens"])
        counters = SessionCounters(llm_calls=calls - 1, total_tokens=tokens, cost_usd=float(got["cost"]))
        return Agent(prefix, got["sessions"] >= churn.sessions, _detection(stopped), counters)

    async def usage(self, agent: Agent, tokens: int, cost_usd: float, ttl_s: float) -> None:
        steps: dict[str, int | float] = {"tokens": int(tokens), "cost": float(cost_usd)}
        await self.store.batch([incr_fields(agent.prefix + COUNTERS, steps, ttl_s)])

    async def stop(self, agent: Agent, detection: Detection, ttl_s: float) -> None:
        record = {"reason": detection.reason.value, "detector": detection.detector, "detail": detection.detail}
        await self.store.set(agent.prefix + "stopped", orjson.dumps(record), ttl_s, only_new=True)


def _detection(raw: bytes | None) -> Detection | None:
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
        detail = f"this agent was stopped in another of its sessions ({data['detail']})"
        return Detection(StopReason(data["reason"]), str(data["detector"]), detail, 0, 0)
    except (ValueError, KeyError, TypeError):
        return None
