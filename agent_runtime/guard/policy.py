"""Policy and escalation: ``evaluate(steps, counters, policy, strikes) -> Decision``, the one entry point.

Both consumers call ``evaluate`` before the next LLM call of a session, with the session's steps (the
gateway rebuilds them from the request's history, the runtime appends them as it goes), its usage
counters and the strikes it recorded so far; they append ``decision.strike`` (when not ``None``) to that
history and act on ``decision.action``. ``evaluate`` is pure and only reads the tail of ``steps``
(``GuardPolicy.lookback_steps`` calls), so a 100-step history costs the same as a 10-step one.

Escalation ladder (``escalate``), over the enabled ``GuardPolicy.rungs`` (default NUDGE, STOP, BLOCK):

- ``WARN``: report only (a header, a metric); the conversation is untouched. Off by default: every
  decision with a detection carries it anyway, so consumers can always warn.
- ``NUDGE``: ``decision.message`` is appended for the model, naming what repeats (Gemini CLI's 1st strike).
- ``STOP``: a graceful stop: the consumer answers with ``decision.message`` as a normal assistant reply
  with no tool calls, so any agent loop ends cleanly, and reports ``decision.reason``.
- ``BLOCK``: after a STOP, every later call of the session is refused with a typed error (reason
  attached) until the strike history is reset (``LoopGuard.reset()`` / the gateway's reset).

The k-th detection of the same loop (counting strikes of the last ``strike_memory`` positions by a
detector of the same family: repeated calls (identical calls, cycles of them), no progress, repeated
errors, monologue, malformed, chanting) takes the k-th enabled rung, the last rung repeating: by default
the first detection nudges, a second one (the model went on looping) stops. A detection of another kind
after a nudge (an agent that left its loop and re-ran a failing test once) starts at the first rung
again: only the same loop going on is stopped. Hard limits (MAX_STEPS, BUDGET, TIMEOUT, ERRORS) skip
WARN/NUDGE: they start at the first enabled rung at or above STOP. A decision at a position that
already has a strike repeats that strike's action without a new strike, so a retried request never
escalates.

Without a strike history (a gateway request that carries no session id), ``evaluate_history`` takes the
rung from the history alone: the strikes the same history's earlier requests would have drawn, i.e. how
many consecutive shorter prefixes (one step shorter each) the detectors also trip on. Deterministic,
and it reads at most ``len(rungs) - 1`` prefixes of the tail.

Defaults (``GuardThresholds``) flag a loop at its 3rd repeated step: on 500 real SWE-bench
trajectories of a strong model, identical consecutive commands reach 2 in 17 runs, 3 in one run that
still resolved, 5 in none; on the 107 sessions in shared/data, no repetition measure exceeds 2.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .detection import LIMIT_REASONS, Detection, StopReason
from .detectors import (
    detect_cycle,
    detect_identical_calls,
    detect_long_polling,
    detect_malformed,
    detect_monologue,
    detect_no_progress,
    detect_repeated_errors,
)
from .limits import GuardLimits, SessionCounters, check_limits
from .steps import Step

__all__ = [
    "DEFAULT_POLICY",
    "Action",
    "Decision",
    "GuardLimits",
    "GuardPolicy",
    "GuardThresholds",
    "StopReason",
    "Strike",
    "detect",
    "escalate",
    "evaluate",
    "evaluate_history",
    "nudge_message",
    "stop_message",
]


class Action(StrEnum):
    """What the consumer does; the rungs of the ladder in escalation order, after CONTINUE."""

    CONTINUE = "continue"
    WARN = "warn"
    NUDGE = "nudge"
    STOP = "stop"
    BLOCK = "block"


_ORDER = list(Action)


@dataclass(frozen=True, slots=True)
class GuardThresholds:
    """Detector thresholds (meaning in ``detectors``); ``None`` switches a detector off."""

    identical_calls: int | None = 4  # 3 repeats of one call + result; real runs: <= 2 (<= 3 in 1/500)
    cycle_repeated_steps: int | None = 3  # A B A B A; real runs: <= 2
    cycle_max_period: int = 5
    no_progress_streak: int | None = 4  # irregular revisiting; real runs: <= 2 (window 20)
    no_progress_window: int = 20
    repeated_errors: int | None = 4  # same call failing; real runs: <= 2
    monologue: int | None = 3  # OpenHands / OpenManus: 3
    malformed: int | None = 3
    long_polling_s: float | None = 1800.0  # the same status polled, unchanged, for half an hour


@dataclass(frozen=True, slots=True)
class GuardPolicy:
    """Everything a session's guard needs; per key / model / session, with ``enabled=False`` to opt out."""

    enabled: bool = True
    thresholds: GuardThresholds = field(default_factory=GuardThresholds)
    limits: GuardLimits = field(default_factory=GuardLimits)
    rungs: tuple[Action, ...] = (Action.NUDGE, Action.STOP, Action.BLOCK)
    strike_memory: int | None = 50  # strikes older than this many positions no longer escalate

    @property
    def lookback_steps(self) -> int:
        """How many trailing tool calls decide: a tail of ``steps`` holding this many tool calls (plus
        the text steps between them) trips exactly like the whole sequence; only the counts reported in
        details may be capped by the slice.
        """
        t = self.thresholds
        needs = [
            t.identical_calls or 0,
            t.cycle_max_period + (t.cycle_repeated_steps or 0),
            t.no_progress_window + (t.no_progress_streak or 0),
            t.repeated_errors or 0,
            t.monologue or 0,
            t.malformed or 0,
            self.limits.max_consecutive_errors or 0,
        ]
        return max(needs)

    @property
    def history_lookback_steps(self) -> int:
        """The tail ``evaluate_history`` needs: ``lookback_steps`` for the request, plus one step for
        each earlier request it looks at."""
        return self.lookback_steps + max(len(self.rungs) - 1, 0)


@dataclass(frozen=True, slots=True)
class Strike:
    """One escalation, recorded by the consumer in the session's history."""

    position: int  # where it was issued (by default: the number of steps)
    action: Action
    reason: StopReason
    detector: str


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do before the next LLM call."""

    action: Action
    detection: Detection | None = None
    message: str | None = None  # NUDGE: text for the model; STOP / BLOCK: the explanation to return
    strike: Strike | None = None  # append to the session's strike history when not None

    @property
    def reason(self) -> StopReason | None:
        return self.detection.reason if self.detection else None


CONTINUE = Decision(Action.CONTINUE)
DEFAULT_POLICY = GuardPolicy()


def nudge_message(detection: Detection) -> str:
    """The message appended for the model on a NUDGE: what repeats, and what to do instead."""
    if detection.reason is StopReason.FAILURE:
        return (
            f"[loop guard] {detection.detail}. Answer with either one valid tool call or a final answer in plain text."
        )
    return (
        f"[loop guard] Possible loop: {detection.detail}. Repeating it will not give a different result. "
        "Step back: re-read the last results, then try a different approach (another command, other "
        "arguments or another tool). If the task is done or cannot be done, say so and stop."
    )


def stop_message(detection: Detection) -> str:
    """The text of a graceful stop (a normal assistant reply) or of a BLOCK error."""
    return (
        f"Stopped by the loop guard (reason: {detection.reason.value}, detector: {detection.detector}): "
        f"{detection.detail}. The session was stopped so it does not keep spending calls; reset the "
        "session's guard or start a new session to continue."
    )


def _detections(steps: Sequence[Step], t: GuardThresholds) -> Iterator[Detection | None]:
    """Each enabled detector's verdict, lazily, most specific first (the first one names the loop)."""
    if t.malformed is not None:
        yield detect_malformed(steps, min_repeats=t.malformed)
    if t.monologue is not None:
        yield detect_monologue(steps, min_repeats=t.monologue)
    if t.identical_calls is not None:
        yield detect_identical_calls(steps, min_repeats=t.identical_calls)
    if t.repeated_errors is not None:
        yield detect_repeated_errors(steps, min_repeats=t.repeated_errors)
    if t.cycle_repeated_steps is not None:
        yield detect_cycle(steps, max_period=t.cycle_max_period, min_repeated_steps=t.cycle_repeated_steps)
    if t.no_progress_streak is not None:
        yield detect_no_progress(steps, min_streak=t.no_progress_streak, window=t.no_progress_window)
    if t.long_polling_s is not None:
        yield detect_long_polling(steps, max_seconds=t.long_polling_s)


def detect(steps: Sequence[Step], thresholds: GuardThresholds) -> Detection | None:
    """The first loop detector that trips on the tail of ``steps``, or ``None``."""
    return next((d for d in _detections(steps, thresholds) if d is not None), None)


def _decision(action: Action, detection: Detection, strike: Strike | None) -> Decision:
    message = None
    if action is Action.NUDGE:
        message = nudge_message(detection)
    elif action in (Action.STOP, Action.BLOCK):
        message = stop_message(detection)
    return Decision(action, detection, message, strike)


# Detectors that see the same loop from two sides: a repeated call, and a cycle of repeated calls.
_FAMILY = {"identical_calls": "repeated_calls", "cycle": "repeated_calls"}


def _family(detector: str) -> str:
    return _FAMILY.get(detector, detector)


def escalate(detection: Detection | None, strikes: Sequence[Strike], position: int, policy: GuardPolicy) -> Decision:
    """The ladder as a pure function (rules in the module docstring)."""
    for strike in strikes:
        if strike.position == position and detection is not None:
            return _decision(strike.action, detection, None)
    rungs = sorted(set(policy.rungs), key=_ORDER.index)
    earlier = [s for s in strikes if s.position < position]
    stop = next((s for s in reversed(earlier) if s.action in (Action.STOP, Action.BLOCK)), None)
    if stop is not None and Action.BLOCK in rungs:
        earlier_stop = Detection(stop.reason, stop.detector, "the session was stopped earlier", 0, position)
        cause = detection or earlier_stop
        return _decision(Action.BLOCK, cause, None)
    if detection is None or not rungs:
        return Decision(Action.CONTINUE, detection)
    if detection.reason in LIMIT_REASONS:
        severe = [rung for rung in rungs if _ORDER.index(rung) >= _ORDER.index(Action.STOP)]
        action = severe[0] if severe else rungs[-1]
    else:
        memory = policy.strike_memory
        family = _family(detection.detector)
        recent = [
            s for s in earlier if (memory is None or position - s.position <= memory) and _family(s.detector) == family
        ]
        action = rungs[min(len(recent), len(rungs) - 1)]
    return _decision(action, detection, Strike(position, action, detection.reason, detection.detector))


def evaluate(
    steps: Sequence[Step],
    counters: SessionCounters | None = None,
    policy: GuardPolicy | None = None,
    strikes: Sequence[Strike] = (),
    *,
    position: int | None = None,
) -> Decision:
    """Decide what to do before the session's next LLM call.

    ``position`` identifies this point of the session for the strike history (default ``len(steps)``;
    pass e.g. the full history's length when ``steps`` is only its tail). Limits are checked first.
    """
    policy = policy or DEFAULT_POLICY
    if not policy.enabled:
        return CONTINUE
    here = len(steps) if position is None else position
    return escalate(_found(steps, counters, policy), strikes, here, policy)


def _found(steps: Sequence[Step], counters: SessionCounters | None, policy: GuardPolicy) -> Detection | None:
    return check_limits(counters or SessionCounters(), policy.limits, steps) or detect(steps, policy.thresholds)


def evaluate_history(
    steps: Sequence[Step],
    counters: SessionCounters | None = None,
    policy: GuardPolicy | None = None,
    *,
    position: int | None = None,
) -> Decision:
    """``evaluate`` with no strike history: the strikes are those the earlier requests of this same
    history would have drawn (each one step shorter), as long as the detectors trip on every one of
    them. So a loop still going escalates one rung per request, and one the agent left (a different
    call or result at the tail) starts over. ``steps`` should hold ``policy.history_lookback_steps``
    tool calls (``evaluate`` needs ``lookback_steps``). The caller decides whether BLOCK is a rung.
    """
    policy = policy or DEFAULT_POLICY
    if not policy.enabled:
        return CONTINUE
    here = len(steps) if position is None else position
    detection = _found(steps, counters, policy)
    if detection is None:
        return CONTINUE
    rungs = sorted(set(policy.rungs), key=_ORDER.index)
    repeats = 0  # earlier requests (the history one, two ... steps shorter) that trip too
    while (
        repeats < len(rungs) - 1
        and repeats + 1 < len(steps)
        and _found(steps[: len(steps) - repeats - 1], counters, policy) is not None
    ):
        repeats += 1
    # Their strikes, oldest first, each on the rung its own predecessors gave it.
    strikes = [Strike(here - repeats + i, rungs[i], detection.reason, detection.detector) for i in range(repeats)]
    return escalate(detection, strikes, here, policy)
