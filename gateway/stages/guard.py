"""Loop guard stage: refuse blocked / over-limit sessions, rebuild steps from the history, decide, escalate.

Request path (after session): first the session's stored strikes and counters (shared store), with
nothing of the request parsed yet: a blocked session, or one over a hard limit, is answered right away
(fail closed: no parsing can let it through). Then the history -> steps (per-replica incremental
parser) -> ``agent_runtime.guard.evaluate`` at position = the session's request sequence number (its
``calls`` counter) -> WARN (header) / NUDGE (text appended for the model) / STOP (the gateway answers
with a normal assistant message) / BLOCK (agent_loop_stopped, status per wire, no retry). A request the
guard acts on gets a key (a hash of its body and history length): a resent body (client retry) takes the
position of its first send and repeats the decision instead of escalating. Requests that go upstream get the chanting
observer (streams) and, opt-in, the terminate tool. Response path (after usage): terminate calls end
the session, chanting in a non-streamed text is cut, chanting of either kind strikes the session, and
the usage counters grow; answers the guard wrote or cut are marked (``ctx.gateway_written``) so the
response cache never stores them. Every replica decides the same: steps come from the request, the
rest from the store. Details: docs/loop-guard.md, section "Gateway".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
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
    check_limits,
    escalate,
    evaluate,
    evaluate_history,
)
from gateway.alerts import guard_alert
from gateway.config.guard import GuardConfig
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.guard.activity import Activity
from gateway.guard.caller import Agent, Callers
from gateway.guard.chanting import ChantObserver, chant_cut
from gateway.guard.metrics import GuardMetrics
from gateway.guard.parsers import SessionParsers, SessionSteps, tail_start, tail_steps
from gateway.guard.policy import PolicyCache, sessionless_policy
from gateway.guard.reply import HEADER, POLICY_HEADER, blocked, header_value, report, stop_reply
from gateway.guard.state import (
    GuardSessions,
    Snapshot,
    decision_record,
    is_blocked,
    position_key,
    request_fingerprint,
    session_prefix,
)
from gateway.guard.terminate import take_termination, with_terminate_tool
from gateway.guard.timeline import Turn, timed_steps
from gateway.history.steps import parts_of
from gateway.services import Services
from gateway.stages.base import Stage
from gateway.state import Op

_STREAM_FIELDS = ("stream", "stream_options")
_DEFAULT_PRESETS = ("", "default", "on")


@dataclass(eq=False)
class GuardNote:
    """What the request path learned that the response path needs (ctx.notes['guard'])."""

    policy: GuardPolicy
    config: GuardConfig
    prefix: str | None  # the session's state keys; None: session-less, or its state unavailable
    position: int  # this request in the strike history: the session's request number (else messages)
    steps: list[Step] = field(default_factory=list)
    tool_calls: int = 0  # in the history
    parsed: SessionSteps | None = None  # the session's steps as its parser keeps them (session requests)
    quiet: bool = False  # no detector can trip on the steps (``CallRepeats.quiet``)
    strikes: list[Strike] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)  # request key -> position of its strike
    key: str | None = None  # this request's key, once the guard acted on it
    observer: ChantObserver | None = None
    terminate: bool = False
    restore: dict[str, Any] = field(default_factory=dict)  # stream fields of a buffered stream
    restore_path_stream: bool = False  # a buffered stream the URL asked for (Gemini)
    arrived: float = field(default_factory=time.time)  # wall clock, for the session's turns
    agent: Agent | None = None  # the caller's agent, when the policy caps session-id churn

    @property
    def lookback(self) -> int:
        """Tool calls at the history's tail that decide (session-less: the earlier requests' too)."""
        return self.policy.lookback_steps if self.prefix is not None else self.policy.history_lookback_steps


def _acts(policy: GuardPolicy) -> bool:
    """Whether the policy ever does more than report (so chanting text may be cut)."""
    return any(rung is not Action.WARN for rung in policy.rungs)


def _counters(snapshot: Snapshot, tool_calls: int = 0) -> SessionCounters:
    return SessionCounters(snapshot.llm_calls, tool_calls, snapshot.total_tokens, snapshot.cost_usd, snapshot.elapsed_s)


def _history_length(ctx: RequestContext) -> int:
    history = ctx.body.get(ctx.wire.history_field)
    return len(history) if isinstance(history, list) else 0


class GuardStage(Stage):
    name = "guard"

    def __init__(self, services: Services) -> None:
        config = services.settings.policy.guard
        self.store = services.store
        self.parsers = SessionParsers.create(config, services.metrics)
        self.activity = Activity.create(config, services.metrics)
        self.metrics = GuardMetrics(services.metrics.registry, self.activity.active)
        self.sessions = GuardSessions(services.store, config.session_ttl_s)
        self.policies = PolicyCache()
        self.callers = Callers(services.store)
        services.extras[self.name] = self.sessions

    # Request path

    async def on_request(self, ctx: RequestContext) -> None:
        started = time.perf_counter()
        config = ctx.policy.guard
        policy = self.policies.get(config, self._preset(ctx, config))
        if not policy.enabled or (ctx.session_key is None and config.sessionless == "off"):
            return
        messages = ctx.wire.guard_history(ctx.body)
        if messages is None:
            return
        try:
            note, snapshot = await self._open(ctx, config, policy, len(messages))
            ctx.notes[self.name] = note
            answered = await self._caller(ctx, note, snapshot, policy)
            if not answered and (snapshot is None or not await self._gate(ctx, note, snapshot)):
                await self._judge(ctx, note, snapshot, messages)
        finally:
            self.metrics.check_seconds.observe(time.perf_counter() - started)
        if ctx.reply is None:
            self._prepare_upstream(ctx, note)

    def reads_ahead(self, ctx: RequestContext) -> Sequence[Op]:
        """The session's state `_open` reads (under the default preset: another one may read more)."""
        config = ctx.policy.guard
        if ctx.session_key is None or not config.enabled:
            return ()
        clock = self.policies.get(config, None).limits.max_wall_time_s is not None
        return list(self.sessions.reads(session_prefix(ctx.tenant_label, ctx.session_id or ""), clock=clock).values())

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

    async def _open(
        self, ctx: RequestContext, config: GuardConfig, policy: GuardPolicy, messages: int
    ) -> tuple[GuardNote, Snapshot | None]:
        """The session's stored state, read before anything of the request is parsed (None: session-less,
        or the store failed: then the request is judged like a session-less one)."""
        key = ctx.session_key
        if key is None:
            return GuardNote(sessionless_policy(policy), config, None, messages), None
        self.activity.touch(key)
        self.metrics.session_seen()
        prefix = session_prefix(ctx.tenant_label, ctx.session_id or "")
        limits = policy.limits
        try:
            snapshot = await self.sessions.begin(prefix, clock=limits.max_wall_time_s is not None, store=ctx.state)
        except Exception:  # any store failure: decide without the session's state
            self.metrics.errors.labels("state").inc()
            return GuardNote(sessionless_policy(policy), config, None, messages), None
        if "fallback" in self.store.backend:
            self.metrics.errors.labels("state_fallback").inc()
        position = snapshot.llm_calls + 1  # this request's number in the session: grows on every request
        return GuardNote(policy, config, prefix, position, strikes=list(snapshot.strikes), keys=snapshot.keys), snapshot

    async def _caller(
        self, ctx: RequestContext, note: GuardNote, snapshot: Snapshot | None, policy: GuardPolicy
    ) -> bool:
        """The key's caps (new sessions, session-less requests: 429 beyond) and, for an agent churning
        through session ids, its shared step/cost caps and stop. True when the request was answered."""
        caps = note.config.caller
        new = ctx.session_id is None or (snapshot is not None and snapshot.llm_calls == 0)
        try:
            await self.callers.admit(ctx, caps, new_session=new)
            if caps.churn is None:
                return False
            note.agent = agent = await self.callers.open(ctx, caps.churn, new_conversation=new)
        except GatewayError:
            raise
        except Exception:  # the store failed: judged as the request's own session (fail open, counted)
            self.metrics.errors.labels("state").inc()
            return False
        detection = agent.stopped or check_limits(agent.counters, policy.limits)
        if not agent.churning or detection is None:
            return False
        stopped = (
            [Strike(note.position - 1, Action.STOP, detection.reason, detection.detector)] if agent.stopped else []
        )
        decision = escalate(detection, [*note.strikes, *stopped], note.position, note.policy)
        await self._act(ctx, note, decision, snapshot)
        return True

    async def _gate(self, ctx: RequestContext, note: GuardNote, snapshot: Snapshot) -> bool:
        """Answer a blocked session, or one over a hard limit (calls, tokens, cost, time), from the stored
        state alone. True when the request was answered (a stop; a block raises). A resent request the
        guard already acted on goes on to be judged again, so it gets the same answer as its first send."""
        limit = check_limits(_counters(snapshot), note.policy.limits)
        if limit is None and not is_blocked(note.strikes):
            return False
        if await self._key(ctx, note):
            return False
        decision = escalate(limit, note.strikes, note.position, note.policy)
        if decision.action not in (Action.STOP, Action.BLOCK):
            return False  # e.g. warn-only: reported by the full check
        await self._act(ctx, note, decision, snapshot)
        return True

    async def _judge(
        self, ctx: RequestContext, note: GuardNote, snapshot: Snapshot | None, messages: list[Any]
    ) -> None:
        """Steps from the history, then every detector and limit."""
        try:
            self._parse(ctx, note, messages)
        except Exception:
            refusal = self._refusal(note)
            if refusal is None:
                raise  # the stage fails open (counted), as for any failure
            await self._act(ctx, note, refusal, snapshot)  # a blocked session stays blocked
            return
        counters = _counters(snapshot, note.tool_calls) if snapshot is not None else SessionCounters()
        if note.quiet and check_limits(counters, note.policy.limits) is None:
            # What evaluate would decide with no detection, without reading the tail (most requests).
            decision = escalate(None, note.strikes, note.position, note.policy)
        else:
            decision = self._evaluate(note, snapshot, counters)
        if decision.action is not Action.CONTINUE and note.key is None and await self._key(ctx, note):
            decision = escalate(decision.detection, note.strikes, note.position, note.policy)
        if decision.action not in (Action.STOP, Action.BLOCK):  # only a resent stop gets here blocked
            decision = self._refusal(note) or decision
        await self._act(ctx, note, decision, snapshot)

    @staticmethod
    def _evaluate(note: GuardNote, snapshot: Snapshot | None, counters: SessionCounters) -> Decision:
        """Every detector and limit on the tail of the steps (timed by the session's recorded turns)."""
        tail = tail_steps(note.steps, note.lookback)
        if snapshot is not None:
            tail = timed_steps(tail, note.tool_calls, snapshot.turns(), note.arrived, note.config.wait_gap_s)
        if note.prefix is None:  # no stored strikes: the rung comes from the history's earlier requests
            return evaluate_history(tail, counters, note.policy, position=note.position)
        return evaluate(tail, counters, note.policy, note.strikes, position=note.position)

    def _parse(self, ctx: RequestContext, note: GuardNote, messages: list[Any]) -> None:
        wire, keep = ctx.wire.guard_format, 2 * note.lookback + 4
        if ctx.session_key is None:
            parser = StepParser(wire)
            parser.feed(messages[tail_start(messages, keep) :], parts_of(ctx.history, wire))
            note.steps = parser.steps
            return
        note.parsed = parsed = self.parsers.parse(ctx.session_key, wire, messages, keep, ctx.history)
        note.steps, note.tool_calls = parsed.steps, parsed.tool_calls
        note.quiet = parsed.repeats.quiet(parsed.steps, note.policy.thresholds, note.policy.limits)

    def _refusal(self, note: GuardNote) -> Decision | None:
        """The block of a blocked session whose request could not be judged (None: not blocked)."""
        if note.prefix is None or not is_blocked(note.strikes):
            return None
        after = max(strike.position for strike in note.strikes) + 1
        decision = escalate(None, note.strikes, max(note.position, after), note.policy)
        return decision if decision.action is Action.BLOCK else None

    async def _key(self, ctx: RequestContext, note: GuardNote) -> bool:
        """Give a request the guard acts on its key; True when it is a resend of a request already struck,
        whose position it then takes (so the ladder repeats that decision instead of escalating)."""
        if note.prefix is None:
            return False
        fingerprint = request_fingerprint(ctx.body, _history_length(ctx))
        try:
            note.key = await self.sessions.request_key(note.prefix, fingerprint)
        except Exception:  # the store failed: a request of its own (a retry may escalate)
            self.metrics.errors.labels("state").inc()
            note.key = position_key(note.position)
            return False
        earlier = note.keys.get(note.key)
        if earlier is None:
            return False
        note.position = earlier
        return True

    async def _act(self, ctx: RequestContext, note: GuardNote, decision: Decision, snapshot: Snapshot | None) -> None:
        pending = snapshot.nudge if snapshot is not None else None
        if decision.detection is None or decision.action is Action.CONTINUE:
            if pending is not None and note.prefix is not None:
                await self._pending_nudge(ctx, note.prefix, pending)
            return
        detection = decision.detection
        report(ctx, decision.action, detection)
        self.metrics.decisions.labels(decision.action.value, detection.reason.value, detection.detector).inc()
        ctx.services.alerts.emit(guard_alert(decision.action, ctx.tenant_label, ctx.session_id, detection))
        if decision.action is Action.NUDGE and decision.message is not None:
            ctx.body = ctx.wire.with_guard_note(ctx.body, decision.message) or ctx.body
        elif decision.action is Action.STOP:
            stop_reply(ctx, decision)
        await self._remember(note, decision, "request", clear_nudge=pending is not None)
        if decision.action in (Action.STOP, Action.BLOCK) and note.agent is not None:
            await self.callers.stop(note.agent, detection, self._churn_window(note))
        if decision.action is Action.BLOCK:
            raise blocked(ctx, decision)

    async def _pending_nudge(self, ctx: RequestContext, prefix: str, pending: str) -> None:
        """A nudge decided on the previous response (chanting) goes with this request."""
        data = orjson.loads(pending)
        ctx.body = ctx.wire.with_guard_note(ctx.body, data["message"]) or ctx.body
        ctx.response_headers[HEADER] = data["header"]
        await self.sessions.clear_nudge(prefix)

    async def _remember(self, note: GuardNote, decision: Decision, source: str, *, clear_nudge: bool = False) -> None:
        """Store the decision (and its strike, under the request's key) in the session's history."""
        if decision.strike is not None:
            note.strikes.append(decision.strike)
        if note.prefix is None:
            return
        writes = [self.sessions.decision(note.prefix, decision_record(decision, note.position, source))]
        if decision.strike is not None:
            key = note.key or position_key(note.position)
            note.keys.setdefault(key, decision.strike.position)
            writes.append(self.sessions.strike(note.prefix, decision.strike, key))
        if clear_nudge:
            writes.append(self.sessions.clear_nudge(note.prefix))
        await asyncio.gather(*writes)

    @staticmethod
    def _churn_window(note: GuardNote) -> float:
        churn = note.config.caller.churn
        return churn.window_s if churn is not None else note.config.session_ttl_s

    def _prepare_upstream(self, ctx: RequestContext, note: GuardNote) -> None:
        """The request goes upstream: watch its stream for chanting, offer the terminate tool."""
        config = note.config
        if config.terminate_tool:
            body = with_terminate_tool(ctx.wire, ctx.body)
            if body is not None:
                note.terminate = True
                if ctx.stream:  # the call must be replaced before the client sees it: buffer, replay later
                    note.restore = {k: body[k] for k in _STREAM_FIELDS if k in body}
                    body = {k: v for k, v in body.items() if k not in _STREAM_FIELDS}
                    if ctx.path_stream:
                        note.restore_path_stream, ctx.path_stream = True, False
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
        if note.restore_path_stream:
            ctx.path_stream = True
        if ctx.reply is None or ctx.reply.source == "guard" or ctx.response_body is None:
            return
        if note.terminate:
            await self._terminate(ctx, note)
        detection = self._chanting(ctx, note)
        if detection is not None:
            await self._chanted(ctx, note, detection)
        tokens = ctx.usage.total if ctx.usage is not None else 0
        if note.agent is not None:
            cost = ctx.cost.usd if ctx.cost is not None else 0.0
            await self.callers.usage(note.agent, tokens, cost, self._churn_window(note))
        if note.prefix is not None:
            made = ctx.wire.reply_tool_calls(ctx.response_body)
            ctx.state.defer(
                self.sessions.answered(
                    note.prefix,
                    tokens,
                    ctx.cost.usd if ctx.cost is not None else 0.0,
                    self.sessions.steps_view(
                        note.position, note.tool_calls + made, note.parsed.view_steps() if note.parsed else []
                    ),
                    Turn(note.tool_calls, made, note.arrived, time.time()),
                )
            )

    async def _terminate(self, ctx: RequestContext, note: GuardNote) -> None:
        assert ctx.response_body is not None
        taken = take_termination(ctx.wire, ctx.response_body)
        if taken is None:
            return
        ctx.response_body, ended = taken
        ctx.gateway_written = True  # the client gets the gateway's final answer, not the model's call
        ctx.response_headers[HEADER] = header_value("terminate", ended.status)
        self.metrics.terminations.labels(ended.status.name).inc()
        if note.prefix is not None:
            await self.sessions.set_status(note.prefix, ended.status, ended.reason)

    def _chanting(self, ctx: RequestContext, note: GuardNote) -> Detection | None:
        """Chanting seen by the stream observer, or found (and cut) in a complete non-streamed text."""
        assert ctx.response_body is not None
        if note.observer is not None:
            if note.observer.detection is not None and note.observer.cut:
                ctx.gateway_written = True  # the stream was cut: not the model's answer
                self.metrics.stream_cuts.labels(ctx.wire.name).inc()
            return note.observer.detection
        if not note.config.chanting.enabled:
            return None
        text = ctx.wire.reply_text(ctx.response_body)
        found = chant_cut(note.config.chanting, text)
        if found is None:
            return None
        keep, detection = found
        # An answer that also calls a tool keeps it whole: cutting the text would lose the agent's action
        # (the chanting still strikes the session).
        if _acts(note.policy) and not ctx.wire.reply_tool_calls(ctx.response_body):
            ctx.response_body = ctx.wire.with_text_only(ctx.response_body, text[:keep])
            ctx.gateway_written = True
            self.metrics.stream_cuts.labels(ctx.wire.name).inc()
        return detection

    async def _chanted(self, ctx: RequestContext, note: GuardNote, detection: Detection) -> None:
        """Chanting strikes the session like any loop; a nudge waits for the session's next request."""
        decision = escalate(detection, note.strikes, note.position, note.policy)
        if decision.action is Action.CONTINUE:
            return
        if note.key is None and await self._key(ctx, note):  # a resent request: its first send's decision
            decision = escalate(detection, note.strikes, note.position, note.policy)
        report(ctx, decision.action, detection)
        self.metrics.decisions.labels(decision.action.value, detection.reason.value, detection.detector).inc()
        ctx.services.alerts.emit(guard_alert(decision.action, ctx.tenant_label, ctx.session_id, detection))
        if decision.action in (Action.STOP, Action.BLOCK) and note.observer is None and decision.message:
            ctx.response_body = ctx.wire.text_reply(ctx.model_name, decision.message)
            ctx.gateway_written = True
        await self._remember(note, decision, "response")
        if decision.action is Action.NUDGE and decision.message is not None and note.prefix is not None:
            pending = {"message": decision.message, "header": ctx.response_headers[HEADER]}
            await self.sessions.set_nudge(note.prefix, orjson.dumps(pending).decode())
