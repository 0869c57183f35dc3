"""``CallRepeats.quiet``: the per-session shortcut past the detectors never hides a detection, is taken on
most requests of real sessions, and reads only the steps that are new since the last request."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import overload

from agent_runtime.guard import (
    Action,
    CallRepeats,
    GuardLimits,
    GuardPolicy,
    GuardThresholds,
    SessionCounters,
    Step,
    StepKind,
    StepParser,
    check_limits,
    detect,
    evaluate,
)
from tests.guard.test_guard_traces import TRACES, loops, pytestmark, sessions  # noqa: F401 (skip w/o traces)

TAIL = GuardPolicy().lookback_steps


def timings(steps: Sequence[Step], rng: random.Random) -> list[Step]:
    """``steps`` as a consumer may time them (``Step.at`` / ``Step.waits``: the gateway's recorded turns)."""
    return [replace(s, at=rng.uniform(0, 7200), waits=s.waits or rng.random() < 0.3) for s in steps]


def assert_nothing_trips(
    steps: list[Step], thresholds: GuardThresholds, limits: GuardLimits, rng: random.Random
) -> None:
    for start in {0, max(0, len(steps) - TAIL), max(0, len(steps) - 3), rng.randrange(len(steps) + 1)}:
        for tail in (steps[start:], timings(steps[start:], rng)):
            assert detect(tail, thresholds) is None
            assert check_limits(SessionCounters(), limits, tail) is None


def replayed(messages: list[dict[str, object]]) -> Iterator[tuple[list[Step], CallRepeats]]:
    """Each request's steps and the session's repeats, fed as the gateway feeds them (new steps only)."""
    parser, repeats = StepParser("openai"), CallRepeats()
    for k, message in enumerate(messages):
        if message["role"] == "assistant" and k:
            repeats.feed(parser.final_since(repeats.fed))
            yield parser.steps, repeats
        parser.feed([message])


def test_quiet_requests_of_recorded_sessions_and_loops_trip_no_detector() -> None:
    rng = random.Random(5)
    policy = GuardPolicy()
    quiet = total = 0
    for session in sessions()[:25]:
        histories = [session["messages"], *(h + loop for _, h, loop in loops(session["messages"], rng))]
        for messages in histories:
            for steps, repeats in replayed(messages):
                total += 1
                if repeats.quiet(steps, policy.thresholds, policy.limits):
                    quiet += 1
                    assert_nothing_trips(steps, policy.thresholds, policy.limits, rng)
                    assert evaluate(steps[-2 * TAIL :]).action is Action.CONTINUE
    print(f"\nquiet: {quiet} of {total} requests")
    assert quiet > total / 2  # the shortcut is the common case


def random_step(rng: random.Random) -> Step:
    kind = rng.choices(list(StepKind), weights=[8, 2, 1, 1])[0]
    if kind is not StepKind.TOOL_CALL:
        text = rng.choice(["t1", "t2", None])
        return Step(kind, text_hash=text, result_hash=rng.choice(["r1", "r2", None]), summary=kind.value)
    return Step(
        kind,
        tool=rng.choice("ab"),
        args_hash=rng.choice("123"),
        result_hash=rng.choice(["x", "y", None]),
        is_error=rng.random() < 0.2,
        waits=rng.random() < 0.1,
        changes=rng.random() < 0.2,
        summary="call",
    )


def random_thresholds(rng: random.Random) -> tuple[GuardThresholds, GuardLimits]:
    def some(low: int, high: int) -> int | None:
        return None if rng.random() < 0.15 else rng.randint(low, high)

    thresholds = GuardThresholds(
        identical_calls=some(0, 5),
        cycle_repeated_steps=some(0, 4),
        cycle_max_period=rng.randint(2, 5),
        no_progress_streak=some(0, 5),
        no_progress_window=rng.randint(1, 20),
        repeated_errors=some(0, 5),
        monologue=some(0, 4),
        malformed=some(0, 4),
        long_polling_s=None if rng.random() < 0.2 else rng.uniform(0, 3600),
    )
    return thresholds, GuardLimits(max_consecutive_errors=some(0, 5))


def test_quiet_random_sequences_trip_no_detector_whatever_the_thresholds() -> None:
    rng = random.Random(11)
    quiet = 0
    for _ in range(300):
        thresholds, limits = random_thresholds(rng)
        steps = [random_step(rng) for _ in range(rng.randint(0, 40))]
        repeats = CallRepeats()
        for n in range(len(steps) + 1):
            final = rng.randint(repeats.fed, n)  # the steps still open at a request: the newest ones
            repeats.feed(steps[repeats.fed : final])
            if repeats.quiet(steps[:n], thresholds, limits):
                quiet += 1
                if n:
                    assert_nothing_trips(steps[:n], thresholds, limits, rng)
    assert quiet > 200


class CountingSteps(Sequence[Step]):
    """A step list that counts the steps read from it."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps, self.read = steps, 0

    def __len__(self) -> int:
        return len(self.steps)

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> list[Step]: ...
    def __getitem__(self, index: int | slice) -> Step | list[Step]:
        got = self.steps[index]
        self.read += len(got) if isinstance(got, list) else 1
        return got


def test_quiet_reads_only_the_steps_not_fed_yet() -> None:
    policy = GuardPolicy()
    history = [Step(StepKind.TOOL_CALL, "bash", f"args {i}", f"out {i}", summary="bash") for i in range(5000)]
    repeats = CallRepeats()
    repeats.feed(history[:-3])
    steps = CountingSteps(history)
    assert repeats.quiet(steps, policy.thresholds, policy.limits)
    assert steps.read <= 4  # the three open steps (and the newest once more), not the 5000
    repeated = CountingSteps([*history, history[10]])
    assert not repeats.quiet(repeated, policy.thresholds, policy.limits)
    assert repeated.read <= 5
