"""A session's guard state in the shared store (Redis across replicas, else this replica's memory).

Steps are never stored: every request carries the full history, so every replica rebuilds them. The
store keeps what the history cannot tell, each under ``{tenant}:guard:{session}:{field}``:

- ``strikes``: the escalation history (list, JSON items: position, action, reason, detector, key). A
  strike's position is the session's request sequence number (``calls``), so escalation follows the
  session's own requests whatever its history length; its key names the request (``request_key``).
  Read back deduplicated by key (the first strike of a request wins), so two replicas racing on one
  retried request escalate exactly once.
- ``counters``: atomic counters, the fields of one hash so that a request steps and reads them in one
  command: ``calls`` (LLM calls, counted on the request path), ``tokens`` and ``cost`` (from each
  response), ``mcp.calls`` (the MCP endpoint's tool calls: gateway/mcp/guard.py). Tool calls of the
  model need no counter: the history has them all.
- ``replay.<hash>``: how often a request body that the guard acted on was sent (short TTL). The same
  body again is a client retry: it gets the key of the first send, so the guard repeats its decision
  instead of escalating; ``RETRY_REPLAYS`` sends later the same body counts as a new request again
  (an agent that really resends one body forever is still escalated).
- ``started``: the session's first request (wall clock, shared by replicas: wall-time limit).
- ``status``: how the session ended when the model called terminate (``GOAL`` / ``FAILURE``).
- ``nudge``: a nudge decided on a response (chanting) that the session's next request carries.
- ``turns``: when the last answers started and ended, and which tool calls they made
  (gateway/guard/timeline.py: a pause before the next request is waiting, not looping).
- ``decisions``: the last decisions for the admin view; ``steps``: the last steps' summaries.

Blocked = a STOP in the strikes; reset clears everything, unblock only the strikes.

Store failures: the store is a ``ResilientStore`` when Redis is configured, so a Redis outage falls back
to this replica's memory (each replica then guards what it sees: a block decided on Redis is not known
to the fallback). Should the store itself raise, the stage decides without session state (detectors
only, first rung, as for a session-less request) and counts ``cachegate_guard_errors_total{kind="state"}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import orjson

from agent_runtime.guard import Action, Decision, Step, StopReason, Strike, canonical_json
from gateway.guard.timeline import TURNS_KEPT, Turn, decode
from gateway.state import Op, StateStore, incr_fields

STRIKES_KEPT = 200
DECISIONS_KEPT = 50
STEPS_SHOWN = 30
# The MCP gateway's tool steps and calls (gateway/mcp/guard.py) live beside them: a reset clears both sides.
FIELDS = (
    "strikes", "counters", "started", "status", "nudge", "decisions", "steps", "turns", "mcp.steps",
)  # fmt: skip
COUNTERS = "counters"
# The counters' own keys before they were one hash (until 2026-11-28): a session that spans that upgrade
# carries its counts over on its first request after it (`_carry_over`), so its limits do not start again.
# Not needed once every session of before has expired (session_ttl_s after the upgrade).
LEGACY_COUNTERS: dict[str, type[int] | type[float]] = {"calls": int, "tokens": int, "cost": float}
REPLAY = "replay."  # + a request body's hash ("." not ":": the admin listing splits keys at the last ":")
# Sends of one body that count as one request: the original and the OpenAI / Anthropic SDKs' default
# 2 retries. Retries come within the SDKs' timeouts (10 min by default), hence the TTL.
RETRY_REPLAYS = 2
REPLAY_TTL_S = 3600.0


def tenant_prefix(tenant: str) -> str:
    return f"{tenant}:guard:"


def session_prefix(tenant: str, session: str) -> str:
    return f"{tenant_prefix(tenant)}{session}:"


def request_fingerprint(body: dict[str, Any], messages: int) -> str:
    """A hash of the request body and its history length: what makes a resent request the same one."""
    try:
        raw = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # e.g. an integer beyond 64 bits: the slower, exact form
        raw = canonical_json(body).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw + b"|" + str(messages).encode(), digest_size=12).hexdigest()


def position_key(position: int) -> str:
    """The key of a request known only by its position (a strike stored without a key, or a request
    whose key the store could not give)."""
    return f"request-{position}"


def _strike(item: bytes) -> tuple[str, Strike]:
    data = orjson.loads(item)
    strike = Strike(data["position"], Action(data["action"]), StopReason(data["reason"]), data["detector"])
    return str(data.get("key") or position_key(strike.position)), strike


def keyed_strikes(items: list[bytes]) -> dict[str, Strike]:
    """Strikes in order by request key, the first one per request only."""
    strikes: dict[str, Strike] = {}
    for item in items:
        key, strike = _strike(item)
        strikes.setdefault(key, strike)
    return strikes


def unique_strikes(items: list[bytes]) -> list[Strike]:
    """Strikes in order, the first one per request only."""
    return list(keyed_strikes(items).values())


def is_blocked(strikes: list[Strike]) -> bool:
    return any(strike.action in (Action.STOP, Action.BLOCK) for strike in strikes)


def _number(raw: bytes | None) -> float:
    return float(raw) if raw else 0.0


@dataclass(frozen=True)
class Snapshot:
    """What a request needs from the store (read in one round of concurrent operations)."""

    strikes: list[Strike]
    keys: dict[str, int]  # request key -> position of that request's strike
    llm_calls: int  # before this request (this request's sequence number is llm_calls + 1)
    total_tokens: int
    cost_usd: float
    elapsed_s: float
    nudge: str | None
    turn_records: list[bytes]  # the session's recorded turns, decoded only when needed (``turns``)

    def turns(self) -> list[Turn]:
        return decode(self.turn_records)


@dataclass(eq=False)
class GuardSessions:
    store: StateStore
    ttl_s: float

    @staticmethod
    def reads(prefix: str, *, clock: bool) -> dict[str, Op]:
        """The plain reads of `begin` (a request declares them ahead: gateway/state/request.py)."""
        reads = {"strikes": Op("range", prefix + "strikes"), "nudge": Op("get", prefix + "nudge")}
        reads["turns"] = Op("range", prefix + "turns")
        if clock:
            reads["started"] = Op("get", prefix + "started")
        return reads

    async def begin(self, prefix: str, *, clock: bool, store: StateStore | None = None) -> Snapshot:
        """Count this LLM call and read the session's state, in one round trip (`store`: the request's
        view, whose reads declared ahead travel with it)."""
        s, ttl = store or self.store, self.ttl_s
        reads = self.reads(prefix, clock=clock)
        # The usage counters are read as a step by 0, with the call's count: one command.
        reads["counters"] = incr_fields(prefix + COUNTERS, {"calls": 1, "tokens": 0, "cost": 0.0}, ttl)
        got = dict(zip(reads, await s.batch(list(reads.values())), strict=True))  # one round trip
        counters, started = got["counters"], got.get("started")
        calls, used_tokens, used_cost = int(counters["calls"]), int(counters["tokens"]), float(counters["cost"])
        strikes, nudge, turns = got["strikes"], got["nudge"], got["turns"]
        now = time.time()
        if calls == 1:  # the session's first request: its clock starts here
            carried, started = await self._carry_over(s, prefix, repr(now).encode())
            calls += int(carried.get("calls", 0))
            used_tokens += int(carried.get("tokens", 0))
            used_cost += carried.get("cost", 0.0)
        elif clock and started is None:
            await s.set(prefix + "started", repr(now).encode(), ttl, only_new=True)
        keyed = keyed_strikes(strikes)
        return Snapshot(
            strikes=list(keyed.values()),
            keys={key: strike.position for key, strike in keyed.items()},
            llm_calls=calls - 1,
            total_tokens=used_tokens,
            cost_usd=used_cost,
            elapsed_s=max(0.0, now - _number(started)) if started else 0.0,
            nudge=nudge.decode() if nudge else None,
            turn_records=turns,
        )

    async def _carry_over(self, s: StateStore, prefix: str, now: bytes) -> tuple[dict[str, int | float], bytes | None]:
        """Start the session's clock, in the round trip that reads its counters of before they were one
        hash (LEGACY_COUNTERS); those found are added to the hash and deleted, and the clock of before is
        kept. The counts carried over, and the session's start."""
        ttl = self.ttl_s
        reads = [Op("get", prefix + name) for name in ("started", *LEGACY_COUNTERS)]
        before, *raws, _ = await s.batch([*reads, Op("set", prefix + "started", 0, ttl, (now,))])
        carried = {name: kind(raw) for (name, kind), raw in zip(LEGACY_COUNTERS.items(), raws, strict=True) if raw}
        if not carried:
            return {}, now
        writes = [incr_fields(prefix + COUNTERS, carried, ttl)]
        if before is not None:
            writes.append(Op("set", prefix + "started", 0, ttl, (before,)))
        await s.batch(writes)
        await s.delete(*(prefix + name for name in LEGACY_COUNTERS))
        return carried, before or now

    async def request_key(self, prefix: str, fingerprint: str) -> str:
        """The key of a request the guard acts on: the same for a body resent up to RETRY_REPLAYS times
        (one atomic counter per body, so racing replicas agree), a new one after that."""
        sends = await self.store.incr(prefix + REPLAY + fingerprint, 1, min(REPLAY_TTL_S, self.ttl_s))
        return f"{fingerprint}.{(sends - 1) // (RETRY_REPLAYS + 1)}"

    async def strike(self, prefix: str, strike: Strike, key: str) -> None:
        item = {
            "position": strike.position,
            "action": strike.action.value,
            "reason": strike.reason.value,
            "detector": strike.detector,
            "key": key,
        }
        await self.store.push(prefix + "strikes", orjson.dumps(item), max_len=STRIKES_KEPT, ttl_s=self.ttl_s)

    async def decision(self, prefix: str, record: dict[str, Any]) -> None:
        item = orjson.dumps({"at": time.time(), **record})
        await self.store.push(prefix + "decisions", item, max_len=DECISIONS_KEPT, ttl_s=self.ttl_s)

    async def usage(self, prefix: str, tokens: int, cost_usd: float) -> None:
        await self.store.batch(self._usage(prefix, tokens, cost_usd))

    def _usage(self, prefix: str, tokens: int, cost_usd: float) -> list[Op]:
        return [incr_fields(prefix + COUNTERS, {"tokens": int(tokens), "cost": float(cost_usd)}, self.ttl_s)]

    def answered(self, prefix: str, tokens: int, cost_usd: float, view: bytes, turn: Turn) -> list[Op]:
        """After an answer: the writes of the session's usage, its steps view and the turn (nobody waits
        for them: the stage defers them to the request's next round trip)."""
        return [
            *self._usage(prefix, tokens, cost_usd),
            Op("set", prefix + "steps", ttl_s=self.ttl_s, values=(view,)),
            Op("push", prefix + "turns", ttl_s=self.ttl_s, values=(turn.encode(),), max_len=TURNS_KEPT),
        ]

    @staticmethod
    def steps_view(position: int, tool_calls: int, shown: list[bytes]) -> bytes:
        """The last steps (``step_view`` each) and the session's tool calls so far, for the admin view."""
        steps = orjson.Fragment(b"[" + b",".join(shown[-STEPS_SHOWN:]) + b"]")
        return orjson.dumps({"position": position, "tool_calls": tool_calls, "steps": steps})

    async def set_status(self, prefix: str, status: StopReason, reason: str) -> None:
        item = orjson.dumps({"status": status.name, "reason": reason, "at": time.time()})
        await self.store.set(prefix + "status", item, self.ttl_s)

    async def set_nudge(self, prefix: str, message: str) -> None:
        await self.store.set(prefix + "nudge", message.encode(), self.ttl_s)

    async def clear_nudge(self, prefix: str) -> None:
        await self.store.delete(prefix + "nudge")

    async def inspect(self, prefix: str) -> dict[str, Any] | None:
        """Everything known about a session, for the admin view; None when nothing is stored."""
        s = self.store
        strikes_raw, decisions_raw, values = await asyncio.gather(
            s.range(prefix + "strikes"),
            s.range(prefix + "decisions"),
            asyncio.gather(*(s.get(prefix + name) for name in ("steps", "status", "started"))),
        )
        steps, status, started = values
        if started is None and not strikes_raw and not decisions_raw and status is None:
            return None
        read = incr_fields(prefix + COUNTERS, {"calls": 0, "tokens": 0, "cost": 0.0}, self.ttl_s)
        (counters,) = await s.batch([read])
        calls, tokens, cost = counters["calls"], counters["tokens"], counters["cost"]
        strikes = unique_strikes(strikes_raw)
        shown = orjson.loads(steps) if steps else {"position": None, "tool_calls": 0, "steps": []}
        return {
            "blocked": is_blocked(strikes),
            "status": orjson.loads(status) if status else {"status": "active"},
            "counters": {
                "llm_calls": calls,
                "tool_calls": shown["tool_calls"],
                "total_tokens": tokens,
                "cost_usd": cost,
                "started_at": _number(started) or None,
            },
            "strikes": [
                {"position": st.position, "action": st.action.value, "reason": st.reason.name, "detector": st.detector}
                for st in strikes
            ],
            "decisions": [orjson.loads(item) for item in decisions_raw],
            "steps": {"position": shown["position"], "steps": shown["steps"]},
        }

    async def unblock(self, prefix: str) -> None:
        await self.store.delete(prefix + "strikes", prefix + "nudge")

    async def reset(self, prefix: str) -> None:
        replays = [key async for key in self.store.scan(prefix + REPLAY)]
        await self.store.delete(*(prefix + name for name in FIELDS), *replays)


def step_view(step: Step) -> bytes:
    """One step as the admin view shows it (encoded once per step: gateway/guard/parsers.py)."""
    shown = {
        "kind": step.kind.value,
        "summary": step.summary,
        "tool": step.tool,
        "args": step.args_hash,
        "result": step.result_hash,
        "error": step.is_error,
    }
    try:
        return orjson.dumps(shown)
    except orjson.JSONEncodeError:  # a lone surrogate in a tool name or text (JSON escapes can carry one)
        valid = {k: v.encode("utf-8", "replace").decode() if isinstance(v, str) else v for k, v in shown.items()}
        return orjson.dumps(valid)


def decision_record(decision: Decision, position: int, source: str) -> dict[str, Any]:
    """What the session's decision log keeps of a nudge, stop or block (`source`: the model side's request
    or a tool call at the MCP endpoint)."""
    assert decision.detection is not None
    detection = decision.detection
    return {
        "position": position,
        "action": decision.action.value,
        "reason": detection.reason.name,
        "detector": detection.detector,
        "detail": detection.detail,
        "source": source,
    }
