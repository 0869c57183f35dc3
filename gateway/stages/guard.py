"""Loop guard stage: rebuild the session's steps from the request's history, decide, escalate.

Request path (after session): the history -> steps (per-replica incremental parser) + the session's
strikes and counters (shared store) -> ``agent_runtime.guard.evaluate`` at position = messages in the
history -> WARN (header) / NUDGE (text appended for the model) / STOP (the gateway answers with a
normal assistant message) / BLOCK (409 agent_loop_stopped). Requests that go upstream get the chanting
observer (streams) and, opt-in, the terminate tool. Response path (after usage): terminate calls end
the session, chanting in a non-streamed text is cut, chanting of either kind strikes the session, and
the usage counters grow. Every replica decides the same: steps come from the request, the rest from
the store. Details: docs/loop-guard.md, section "Gateway".
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from agent_runtime.guard import (
    Action,
    Decision,
    Detection,
    GuardPolicy,
    SessionCounters,
    Step,
    StepParser,
    Strike,
    escalate,
    evaluate,
)
from gateway.config.guard import GuardConfig
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.guard import responses
from gateway.guard.activity import Activity
from gateway.guard.chanting import ChantObserver, chant_cut
from gateway.guard.metrics import GuardMetrics
from gateway.guard.nudge import append_nudge
from gateway.guard.parsers import SessionParsers, history_tool_calls, tail_start, tail_steps
from gateway.guard.policy import PolicyCache, sessionless_policy
from gateway.guard.reply import HEADER, POLICY_HEADER, blocked, header_value, report, stop_reply
from gateway.guard.state import GuardSessions, Snapshot, session_prefix
from gateway.guard.terminate import take_termination, with_terminate_tool
from gateway.services import Services
from gateway.stages.base import Stage

_STREAM_FIELDS = ("stream", "stream_options")
_DEFAULT_PRESETS = ("", "default", "on")


@dataclass(eq=False)
class GuardNote:
    """What the request path learned that the response path needs (ctx.notes['guard'])."""

    policy: GuardPolicy
    config: GuardConfig
    prefix: str | None  # the session's state keys; None: session-less, or its state unavailable
    position: int
    steps: list[Step]
    tool_calls: int = 0  # in the history
    strikes: list[Strike] = field(default_factory=list)
    observer: ChantObserver | None = None
    terminate: bool = False
    restore: dict[str, Any] = field(default_factory=dict)  # stream fields of a buffered stream


def _position(note: GuardNote) -> int:
    """Where this request stands for the strike history: messages in its history, except that a history
    shorter than the session's stop (a restarted or rewritten conversation) still counts as later."""
    stops = [s.position for s in note.strikes if s.action in (Action.STOP, Action.BLOCK)]
    return stops[-1] + 1 if stops and note.position < stops[-1] else note.position


def _acts(policy: GuardPolicy) -> bool:
    """Whether the policy ever does more than report (so chanting text may be cut)."""
    return any(rung is not Action.WARN for rung in policy.rungs)


def _record(decision: Decision, position: int, source: str) -> dict[str, Any]:
    assert decision.detection is not None
    d = decision.detection
    return {
        "position": position,
        "action": decision.action.value,
        "reason": d.reason.name,
        "detector": d.detector,
        "detail": d.detail,
        "source": source,
    }


class GuardStage(Stage):
    name = "guard"

    def __init__(self, services: Services) -> None:
        config = services.settings.policy.guard
        self.store = services.store
        self.parsers = SessionParsers(config.parser_cache_sessions)
        self.activity = Activity(config.active_window_s)
        self.metrics = GuardMetrics(services.metrics.registry, self.activity.active)
        self.sessions = GuardSessions(services.store, config.session_ttl_s)
        self.policies = PolicyCache()
        services.extras[self.name] = self.sessions

    # Request path

    async def on_request(self, ctx: RequestContext) -> None:
        started = time.perf_counter()
        config = ctx.policy.guard
        policy = self.policies.get(config, self._preset(ctx, config))
        messages = ctx.body.get("messages")
        if not policy.enabled or not isinstance(messages, list):
            return
        if ctx.session_key is None and config.sessionless == "off":
            return
        keep = 2 * policy.lookback_steps + 4
        note, snapshot = await self._load(ctx, config, policy, messages, keep)
        ctx.notes[self.name] = note
        counters = SessionCounters()
        if snapshot is not None:
            counters = SessionCounters(
                snapshot.llm_calls, note.tool_calls, snapshot.total_tokens, snapshot.cost_usd, snapshot.elapsed_s
            )
        tail = tail_steps(note.steps, note.policy.lookback_steps)
        decision = evaluate(tail, counters, note.policy, note.strikes, position=_position(note))
        try:
            await self._act(ctx, note, decision, snapshot)
        finally:
            self.metrics.check_seconds.observe(time.perf_counter() - started)
        if ctx.reply is None:
            self._prepare_upstream(ctx, note)

    def _preset(self, ctx: RequestContext, config: GuardConfig) -> str | None:
        """The x-cachegate-guard-policy value, if the config lets clients choose it (else 400)."""
        value = (ctx.headers.get(POLICY_HEADER) or "").strip().lower()
        if value in _DEFAULT_PRESETS:
            return None
        if value not in config.header_policies:
            self.metrics.errors.labels("policy_header_refused").inc()
            allowed = ", ".join(["default", *config.header_policies])
            raise GatewayError(
                ErrorKind.INVALID_REQUEST,
                f"{POLICY_HEADER}: '{value}' is not allowed here (allowed: {allowed}).",
                param=POLICY_HEADER,
            )
        return value

    async def _load(
        self, ctx: RequestContext, config: GuardConfig, policy: GuardPolicy, messages: list[Any], keep: int
    ) -> tuple[GuardNote, Snapshot | None]:
        """Steps, plus the session's stored state (None: session-less, or the store failed)."""
        wire, position = ctx.wire.name, len(messages)
        key = ctx.session_key
        if key is None:
            parser = StepParser(wire)
            parser.feed(messages[tail_start(messages, keep) :])
            return GuardNote(sessionless_policy(policy), config, None, position, parser.steps), None
        steps = self.parsers.steps(key, wire, messages, keep)
        self.activity.touch(key)
        prefix = session_prefix(ctx.tenant_label, ctx.session_id or "")
        limits = policy.limits
        try:
            snapshot = await self.sessions.begin(
                prefix,
                tokens=limits.max_total_tokens is not None,
                cost=limits.max_cost_usd is not None,
                clock=limits.max_wall_time_s is not None,
            )
        except Exception:  # any store failure: decide without the session's state
            self.metrics.errors.labels("state").inc()
            return GuardNote(sessionless_policy(policy), config, None, position, steps), None
        if "fallback" in self.store.backend:
            self.metrics.errors.labels("state_fallback").inc()
        calls = history_tool_calls(wire, messages)
        return GuardNote(policy, config, prefix, position, steps, calls, list(snapshot.strikes)), snapshot

    async def _act(self, ctx: RequestContext, note: GuardNote, decision: Decision, snapshot: Snapshot | None) -> None:
        pending = snapshot.nudge if snapshot is not None else None
        if decision.detection is None or decision.action is Action.CONTINUE:
            if pending is not None and note.prefix is not None:
                await self._pending_nudge(ctx, note.prefix, pending)
            return
        detection = decision.detection
        report(ctx, decision.action, detection)
        self.metrics.decisions.labels(decision.action.value, detection.reason.value, detection.detector).inc()
        if decision.action is Action.NUDGE and decision.message is not None:
            ctx.body = append_nudge(ctx.wire.name, ctx.body, decision.message) or ctx.body
        elif decision.action is Action.STOP:
            stop_reply(ctx, decision)
        await self._remember(note, decision, "request", clear_nudge=pending is not None)
        if decision.action is Action.BLOCK:
            raise blocked(decision)

    async def _pending_nudge(self, ctx: RequestContext, prefix: str, pending: str) -> None:
        """A nudge decided on the previous response (chanting) goes with this request."""
        data = orjson.loads(pending)
        ctx.body = append_nudge(ctx.wire.name, ctx.body, data["message"]) or ctx.body
        ctx.response_headers[HEADER] = data["header"]
        await self.sessions.clear_nudge(prefix)

    async def _remember(self, note: GuardNote, decision: Decision, source: str, *, clear_nudge: bool = False) -> None:
        """Store the decision (and its strike) in the session's history."""
        if decision.strike is not None:
            note.strikes.append(decision.strike)
        if note.prefix is None:
            return
        writes = [self.sessions.decision(note.prefix, _record(decision, note.position, source))]
        if decision.strike is not None:
            writes.append(self.sessions.strike(note.prefix, decision.strike))
        if clear_nudge:
            writes.append(self.sessions.clear_nudge(note.prefix))
        await asyncio.gather(*writes)

    def _prepare_upstream(self, ctx: RequestContext, note: GuardNote) -> None:
        """The request goes upstream: watch its stream for chanting, offer the terminate tool."""
        config = note.config
        if config.terminate_tool:
            body = with_terminate_tool(ctx.wire.name, ctx.body)
            if body is not None:
                note.terminate = True
                if ctx.stream:  # the call must be replaced before the client sees it: buffer, replay later
                    note.restore = {k: body[k] for k in _STREAM_FIELDS if k in body}
                    body = {k: v for k, v in body.items() if k not in _STREAM_FIELDS}
                ctx.body = body
        if config.chanting.enabled and ctx.stream:
            note.observer = ChantObserver(config.chanting, cut=_acts(note.policy))
            ctx.stream_observers.append(note.observer)

    # Response path

    async def on_response(self, ctx: RequestContext) -> None:
        note = ctx.notes.get(self.name)
        if not isinstance(note, GuardNote):
            return
        if note.restore:  # first, so the client gets the stream it asked for whatever happens below
            ctx.body = {**ctx.body, **note.restore}
        if ctx.reply is None or ctx.reply.source == "guard" or ctx.response_body is None:
            return
        if note.terminate:
            await self._terminate(ctx, note)
        detection = self._chanting(ctx, note)
        if detection is not None:
            await self._chanted(ctx, note, detection)
        if note.prefix is not None:
            tokens = ctx.usage.total if ctx.usage is not None else 0
            tool_calls = note.tool_calls + responses.tool_call_count(ctx.wire.name, ctx.response_body)
            await asyncio.gather(
                self.sessions.usage(note.prefix, tokens, ctx.cost.usd if ctx.cost is not None else 0.0),
                self.sessions.steps(note.prefix, note.position, tool_calls, note.steps),
            )

    async def _terminate(self, ctx: RequestContext, note: GuardNote) -> None:
        assert ctx.response_body is not None
        taken = take_termination(ctx.wire.name, ctx.response_body)
        if taken is None:
            return
        ctx.response_body, ended = taken
        ctx.response_headers[HEADER] = header_value("terminate", ended.status)
        self.metrics.terminations.labels(ended.status.name).inc()
        if note.prefix is not None:
            await self.sessions.set_status(note.prefix, ended.status, ended.reason)

    def _chanting(self, ctx: RequestContext, note: GuardNote) -> Detection | None:
        """Chanting seen by the stream observer, or found (and cut) in a complete non-streamed text."""
        assert ctx.response_body is not None
        if note.observer is not None:
            if note.observer.detection is not None and note.observer.cut:
                self.metrics.stream_cuts.labels(ctx.wire.name).inc()
            return note.observer.detection
        if not note.config.chanting.enabled:
            return None
        found = chant_cut(note.config.chanting, responses.response_text(ctx.wire.name, ctx.response_body))
        if found is None:
            return None
        keep, detection = found
        if _acts(note.policy):
            ctx.response_body = responses.truncated(ctx.wire.name, ctx.response_body, keep)
            self.metrics.stream_cuts.labels(ctx.wire.name).inc()
        return detection

    async def _chanted(self, ctx: RequestContext, note: GuardNote, detection: Detection) -> None:
        """Chanting strikes the session like any loop; a nudge waits for the session's next request."""
        decision = escalate(detection, note.strikes, note.position, note.policy)
        if decision.action is Action.CONTINUE:
            return
        report(ctx, decision.action, detection)
        self.metrics.decisions.labels(decision.action.value, detection.reason.value, detection.detector).inc()
        if decision.action in (Action.STOP, Action.BLOCK) and note.observer is None and decision.message:
            ctx.response_body = ctx.wire.text_reply(ctx.model_name, decision.message)
        await self._remember(note, decision, "response")
        if decision.action is Action.NUDGE and decision.message is not None and note.prefix is not None:
            pending = {"message": decision.message, "header": ctx.response_headers[HEADER]}
            await self.sessions.set_nudge(note.prefix, orjson.dumps(pending).decode())
