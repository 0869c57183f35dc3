"""Hard limits, the escalation ladder and evaluate()."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_runtime.guard import (
    Action,
    Detection,
    GuardLimits,
    GuardPolicy,
    GuardThresholds,
    LoopGuard,
    SessionCounters,
    StopReason,
    Strike,
    check_limits,
    escalate,
    evaluate,
    evaluate_history,
)
from tests.guard.conftest import bash

LOOP = [bash("ls", "a.py")] * 4


@pytest.mark.parametrize(
    ("counters", "reason", "detector"),
    [
        (SessionCounters(llm_calls=500), StopReason.MAX_STEPS, "max_llm_calls"),
        (SessionCounters(tool_calls=1000), StopReason.MAX_STEPS, "max_tool_calls"),
        (SessionCounters(total_tokens=2_000), StopReason.BUDGET, "max_total_tokens"),
        (SessionCounters(cost_usd=1.5), StopReason.BUDGET, "max_cost_usd"),
        (SessionCounters(elapsed_s=60.0), StopReason.TIMEOUT, "max_wall_time_s"),
    ],
)
def test_each_limit_trips_at_its_value(counters: SessionCounters, reason: StopReason, detector: str) -> None:
    limits = GuardLimits(max_total_tokens=2_000, max_cost_usd=1.5, max_wall_time_s=60.0)
    detection = check_limits(counters, limits)
    assert detection is not None and (detection.reason, detection.detector) == (reason, detector)
    assert check_limits(SessionCounters(), limits) is None
    assert check_limits(counters, GuardLimits(None, None, None, None, None, None)) is None


def test_consecutive_errors_of_different_calls() -> None:
    failing = [bash(f"try {i}", "no", code=1) for i in range(10)]
    detection = check_limits(SessionCounters(), GuardLimits(), [bash("ok"), *failing])
    assert detection is not None and detection.reason is StopReason.ERRORS
    assert (detection.count, detection.start) == (10, 1)
    assert check_limits(SessionCounters(), GuardLimits(), failing[:9]) is None


def test_ladder_nudges_then_stops_then_blocks() -> None:
    guard = LoopGuard()
    guard.add(*LOOP)
    nudge = guard.check()
    assert nudge.action is Action.NUDGE and nudge.reason is StopReason.LOOP
    assert nudge.message is not None and 'bash {"command":"ls"}' in nudge.message
    guard.add(LOOP[0])  # the model ignored the nudge
    stop = guard.check()
    assert stop.action is Action.STOP and stop.message is not None and "reason: loop" in stop.message
    guard.add(bash("echo hi"))  # a client that ignores the stop
    block = guard.check()
    assert block.action is Action.BLOCK and block.reason is StopReason.LOOP
    guard.reset()
    assert guard.check().action is Action.CONTINUE


def test_recovery_after_a_nudge_continues() -> None:
    guard = LoopGuard()
    guard.add(*LOOP)
    assert guard.check().action is Action.NUDGE
    guard.add(bash("cat a.py", "print(1)"))
    assert guard.check().action is Action.CONTINUE


def test_same_position_repeats_the_decision_without_escalating() -> None:
    first = evaluate(LOOP)
    assert first.strike is not None
    again = evaluate(LOOP, strikes=[first.strike])
    assert again.action is Action.NUDGE and again.strike is None


@pytest.mark.parametrize(
    ("rungs", "actions"),
    [
        ((Action.WARN,), [Action.WARN, Action.WARN, Action.WARN]),
        ((Action.WARN, Action.NUDGE, Action.STOP, Action.BLOCK), [Action.WARN, Action.NUDGE, Action.STOP]),
        ((Action.NUDGE,), [Action.NUDGE, Action.NUDGE, Action.NUDGE]),
        ((Action.STOP, Action.NUDGE), [Action.NUDGE, Action.STOP, Action.STOP]),
        ((), [Action.CONTINUE] * 3),
    ],
)
def test_configurable_rungs(rungs: tuple[Action, ...], actions: list[Action]) -> None:
    guard = LoopGuard(GuardPolicy(rungs=rungs))
    guard.add(*LOOP)
    seen = []
    for _ in actions:
        seen.append(guard.check().action)
        guard.add(LOOP[0])
    assert seen == actions


def test_limits_skip_the_nudge() -> None:
    decision = evaluate([bash("ls")], SessionCounters(llm_calls=500))
    assert decision.action is Action.STOP and decision.reason is StopReason.MAX_STEPS
    warn_only = evaluate([bash("ls")], SessionCounters(llm_calls=500), GuardPolicy(rungs=(Action.WARN,)))
    assert warn_only.action is Action.WARN


def test_old_strikes_are_forgotten() -> None:
    old = Strike(position=10, action=Action.NUDGE, reason=StopReason.LOOP, detector="identical_calls")
    steps = [bash(f"cat f{i}") for i in range(80)] + LOOP
    assert evaluate(steps, strikes=[old]).action is Action.NUDGE
    assert evaluate(steps, policy=GuardPolicy(strike_memory=None), strikes=[old]).action is Action.STOP


def test_disabled_policy_and_disabled_detectors() -> None:
    assert evaluate(LOOP, policy=GuardPolicy(enabled=False)).action is Action.CONTINUE
    off = GuardPolicy(thresholds=GuardThresholds(identical_calls=None, no_progress_streak=None))
    assert evaluate(LOOP, policy=off).action is Action.CONTINUE
    assert evaluate([*LOOP, LOOP[0]], policy=off).action is Action.CONTINUE


def test_escalate_blocks_after_a_stop_even_without_a_detection() -> None:
    stop = Strike(position=4, action=Action.STOP, reason=StopReason.BUDGET, detector="max_cost_usd")
    decision = escalate(None, [stop], 6, GuardPolicy())
    assert decision.action is Action.BLOCK and decision.reason is StopReason.BUDGET
    no_block = escalate(None, [stop], 6, GuardPolicy(rungs=(Action.NUDGE, Action.STOP)))
    assert no_block.action is Action.CONTINUE


def test_evaluate_on_the_tail_matches_the_full_history() -> None:
    policy = GuardPolicy()
    steps = [bash(f"cat f{i}") for i in range(100)] + LOOP
    tail = steps[-policy.lookback_steps :]
    full, part = evaluate(steps, policy=policy), evaluate(tail, policy=policy, position=len(steps))
    assert replace(full, detection=None) == replace(part, detection=None)
    assert isinstance(full.detection, Detection) and isinstance(part.detection, Detection)
    assert part.detection.detail == full.detection.detail


NO_BLOCK = GuardPolicy(rungs=(Action.NUDGE, Action.STOP))


def test_history_alone_escalates_one_rung_per_repeat() -> None:
    actions = [evaluate_history(LOOP[:1] * n, policy=NO_BLOCK).action for n in range(1, 8)]
    assert actions == [Action.CONTINUE] * 3 + [Action.NUDGE] + [Action.STOP] * 3
    ladder = [evaluate_history(LOOP[:1] * n).action for n in range(4, 8)]  # BLOCK is the caller's choice
    assert ladder == [Action.NUDGE, Action.STOP, Action.BLOCK, Action.BLOCK]
    assert evaluate_history(LOOP[:1] * 9, policy=GuardPolicy(rungs=(Action.WARN,))).action is Action.WARN


def test_history_alone_starts_over_once_the_loop_is_left() -> None:
    moved = [*LOOP, bash("cat a.py", "print(1)")]
    assert evaluate_history(moved, policy=NO_BLOCK).action is Action.CONTINUE
    again = [*moved, *[bash("pwd", "/repo")] * 4]  # a new loop later: a nudge first again
    assert evaluate_history(again, policy=NO_BLOCK).action is Action.NUDGE
    polling = [bash("make status", f"{i}0% done") for i in range(10)]
    assert evaluate_history(polling, policy=NO_BLOCK).action is Action.CONTINUE


def test_history_alone_is_deterministic_and_reads_a_bounded_tail() -> None:
    long = [bash(f"step {i}") for i in range(500)] + LOOP * 2
    policy = NO_BLOCK
    tail = long[-policy.history_lookback_steps :]
    assert evaluate_history(long, policy=policy) == evaluate_history(long, policy=policy)
    whole, bounded = evaluate_history(long, policy=policy), evaluate_history(tail, policy=policy, position=len(long))
    assert (bounded.action, bounded.strike) == (whole.action, whole.strike) and whole.action is Action.STOP
    limit = evaluate_history([bash(f"try {i}", "no", code=1) for i in range(10)], policy=NO_BLOCK)
    assert limit.action is Action.STOP and limit.reason is StopReason.ERRORS  # hard limits skip the nudge


def test_only_the_same_loop_going_on_is_stopped() -> None:
    """After a nudge for repeated calls, another weak signal (a no-progress streak of other calls: an agent
    re-running its failing test while it recovers) is a first detection again; the same repeat, or a
    cycle of the same calls, is the loop going on."""
    nudged = Strike(position=4, action=Action.NUDGE, reason=StopReason.LOOP, detector="identical_calls")
    other = Detection(StopReason.LOOP, "no_progress", "the last 4 calls only repeated earlier calls", 4, 2)
    assert escalate(other, [nudged], 6, GuardPolicy()).action is Action.NUDGE
    for detector in ("identical_calls", "cycle"):
        same = Detection(StopReason.LOOP, detector, "the same calls again", 5, 0)
        assert escalate(same, [nudged], 6, GuardPolicy()).action is Action.STOP
