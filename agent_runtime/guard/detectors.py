"""Loop detectors: small pure functions over a step sequence, each returning ``Detection | None``.

Every detector looks only at the *tail* of the sequence (is the session looping now?), walking
backwards, so its cost depends on the loop's length and its window, never on the history's length.

Tool-call detectors see only ``TOOL_CALL`` steps: text, empty and malformed steps between two calls are
transparent, so a format-error retry between two identical calls neither hides nor creates a loop.
Identity is ``Step.key`` (tool + canonical args + result): repeating a call whose result CHANGES is
progress (polling a build) and never trips them; nor does waiting: a repeat or cycle that holds a call
that waits (``Step.waits``: `sleep 30`, a wait tool, a watch, or a long pause before the next request
as the gateway sees it) is polling, left to ``detect_long_polling``'s wall-clock cap;
except ``detect_repeated_errors``, which accepts
differing error texts (timestamps, pids) as long as every one is an error.

=========================  ==========  ======================================================  =========
detector                   reason      trips when the tail is                                  count
=========================  ==========  ======================================================  =========
``detect_identical_calls`` LOOP        the same call with the same result ``min_repeats``      run
                                       times in a row
``detect_cycle``           LOOP        a cycle of 2..``max_period`` calls, identical results,  span
                                       repeated for ``min_repeated_steps`` steps after its
                                       first period (A B A B A: 3 repeated steps), and at
                                       least one full period (A B C D A B C D)
``detect_no_progress``     NO_PROGRESS ``min_streak`` calls in a row that each repeat a call   streak
                                       + result seen in the ``window`` calls before it, with
                                       no new change (an edit) between the two
``detect_long_polling``    NO_PROGRESS the same waiting call with the same result for          run
                                       ``max_seconds`` (wall clock, ``Step.at``)
``detect_repeated_errors`` LOOP        the same call failing ``min_repeats`` times in a row    run
``detect_monologue``       LOOP        the same text (no tool call) ``min_repeats`` times in   run
                                       a row, to the same reply
``detect_malformed``       FAILURE     ``min_repeats`` empty or malformed responses in a row   run
=========================  ==========  ======================================================  =========

The streaming text detector ``ChantDetector`` lives in ``chanting`` and is re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from .chanting import ChantDetector
from .detection import Detection, StopReason
from .steps import Step, StepKind

__all__ = [
    "ChantDetector",
    "detect_cycle",
    "detect_identical_calls",
    "detect_long_polling",
    "detect_malformed",
    "detect_monologue",
    "detect_no_progress",
    "detect_repeated_errors",
]

_BROKEN = (StepKind.EMPTY, StepKind.MALFORMED)


def _calls(steps: Sequence[Step]) -> Iterator[tuple[int, Step]]:
    """Tool-call steps with their indices, newest first."""
    for index in range(len(steps) - 1, -1, -1):
        if steps[index].kind is StepKind.TOOL_CALL:
            yield index, steps[index]


def _recent_calls(steps: Sequence[Step], limit: int) -> list[tuple[int, Step]]:
    """The newest ``limit`` tool-call steps, newest first."""
    found: list[tuple[int, Step]] = []
    for item in _calls(steps):
        found.append(item)
        if len(found) == limit:
            break
    return found


def _quote(step: Step) -> str:
    return f"`{step.summary}`"


class _CallRun(NamedTuple):
    newest: Step
    start: int  # index of the run's oldest call
    length: int


def _newest_call_run(steps: Sequence[Step], same: Callable[[Step, Step], bool]) -> _CallRun | None:
    """The run of consecutive tool calls, newest back, for which ``same(call, newest)`` holds."""
    calls = _calls(steps)
    newest = next(calls, None)
    if newest is None:
        return None
    start, last = newest
    count = 1
    for index, step in calls:
        if not same(step, last):
            break
        start, count = index, count + 1
    return _CallRun(last, start, count)


def detect_identical_calls(steps: Sequence[Step], *, min_repeats: int = 4) -> Detection | None:
    """The same call with the same result, ``min_repeats`` times in a row (not a call that waits: polling)."""
    run = _newest_call_run(steps, lambda step, newest: step.key == newest.key)
    if run is None or run.length < min_repeats or run.newest.waits:
        return None
    detail = f"{_quote(run.newest)} ran {run.length} times in a row with identical results"
    return Detection(StopReason.LOOP, "identical_calls", detail, run.length, run.start)


def detect_cycle(
    steps: Sequence[Step], *, max_period: int = 5, min_repeated_steps: int = 3, max_lookback: int = 64
) -> Detection | None:
    """A cycle of 2..``max_period`` distinct calls with identical results, repeating.

    ``min_repeated_steps`` counts the steps after the cycle's first full period: A B A B A has period 2
    and 3 repeated steps; a cycle longer than that must repeat a full period (A B C D A B C D). The
    shortest matching period is reported; a cycle whose calls are all the same is left to
    ``detect_identical_calls``. Counts look back at most ``max_lookback`` calls.
    """
    recent = _recent_calls(steps, max(max_lookback, max_period + min_repeated_steps))
    keys = [step.key for _, step in recent]
    for period in range(2, max_period + 1):
        if len(keys) < period + min_repeated_steps or len(set(keys[:period])) == 1:
            continue
        repeated = 0
        while period + repeated < len(keys) and keys[repeated] == keys[repeated + period]:
            repeated += 1
        # A longer cycle must come round once in full: a second pass over a set of checks (tests, a
        # reproduction script and a diff, run again before submitting) is not yet a loop.
        if repeated >= max(min_repeated_steps, period) and not any(step.waits for _, step in recent[:period]):
            span = period + repeated
            cycle = " -> ".join(_quote(step) for _, step in reversed(recent[repeated : repeated + period]))
            detail = f"the cycle {cycle} repeated for {span} calls with identical results"
            return Detection(StopReason.LOOP, "cycle", detail, span, recent[span - 1][0])
    return None


def detect_no_progress(steps: Sequence[Step], *, min_streak: int = 4, window: int = 20) -> Detection | None:
    """``min_streak`` calls in a row that each repeat a call + result seen in the ``window`` before it,
    since the last change.

    Catches loops with no fixed period (A B B A B A ...): nothing new was learnt for ``min_streak``
    steps. A call whose result changed is new, so polling with changing output never counts; nor does
    re-running a check after a new change (an edit, a write: ``Step.changes``) between the two runs:
    tests and reproduction scripts re-run after a fix verify it, whatever they print. A change that
    repeats an earlier one (the same no-op edit again) changed nothing, and is no boundary.
    """
    recent = _recent_calls(steps, window + min_streak)
    keys = [step.key for _, step in recent]

    def revisits(index: int) -> bool:
        for older in range(index + 1, min(len(keys), index + 1 + window)):
            if keys[older] == keys[index]:
                return True
            if recent[older][1].changes and keys[older] not in keys[older + 1 : older + 1 + window]:
                return False
        return False

    streak = 0
    while streak < len(keys) and revisits(streak):
        streak += 1
    if streak < min_streak or any(step.waits for _, step in recent[:streak]):
        return None
    seen: list[str] = []
    for _, step in recent[:streak]:
        if _quote(step) not in seen:
            seen.append(_quote(step))
    examples = ", ".join(seen[:3])
    detail = f"the last {streak} calls only repeated earlier calls with identical results ({examples})"
    return Detection(StopReason.NO_PROGRESS, "no_progress", detail, streak, recent[streak - 1][0])


def detect_long_polling(steps: Sequence[Step], *, max_seconds: float = 1800.0) -> Detection | None:
    """The same waiting call with the same result, for ``max_seconds`` or more (by ``Step.at``): polling
    is not a loop, but a status that never changes is not worth waiting on forever (the wall-clock cap
    of the polling the other detectors leave alone)."""
    run = _newest_call_run(steps, lambda step, newest: step.key == newest.key)
    if run is None or run.length < 2 or not run.newest.waits:
        return None
    first, last = steps[run.start].at, run.newest.at
    if first is None or last is None or last - first < max_seconds:
        return None
    minutes = (last - first) / 60
    detail = f"{_quote(run.newest)} returned the same result for {minutes:.0f} minutes ({run.length} calls)"
    return Detection(StopReason.NO_PROGRESS, "long_polling", detail, run.length, run.start)


def detect_repeated_errors(steps: Sequence[Step], *, min_repeats: int = 4) -> Detection | None:
    """The same call (tool + args) failing ``min_repeats`` times in a row, whatever the error text."""
    run = _newest_call_run(steps, lambda step, newest: step.is_error and step.action == newest.action)
    if run is None or not run.newest.is_error or run.length < min_repeats:
        return None
    detail = f"{_quote(run.newest)} failed {run.length} times in a row"
    return Detection(StopReason.LOOP, "repeated_errors", detail, run.length, run.start)


def detect_monologue(steps: Sequence[Step], *, min_repeats: int = 3) -> Detection | None:
    """The same text with no tool call, ``min_repeats`` times in a row, answered the same way.

    A reply not known yet (the newest text step) matches any reply.
    """
    start, count = len(steps), 0
    text: str | None = None
    reply: str | None = None
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if step.kind in _BROKEN:
            continue
        if step.kind is not StepKind.TEXT or (text is not None and step.text_hash != text):
            break
        if reply is not None and step.result_hash is not None and step.result_hash != reply:
            break
        text, reply = step.text_hash, reply or step.result_hash
        start, count = index, count + 1
    if count < min_repeats:
        return None
    detail = f"the same reply {_quote(steps[start])} was given {count} times in a row"
    return Detection(StopReason.LOOP, "monologue", detail, count, start)


def detect_malformed(steps: Sequence[Step], *, min_repeats: int = 3) -> Detection | None:
    """``min_repeats`` empty or malformed responses in a row."""
    start, count = len(steps), 0
    while start > 0 and steps[start - 1].kind in _BROKEN:
        start, count = start - 1, count + 1
    if count < min_repeats:
        return None
    detail = f"the last {count} responses were empty or malformed (last: {_quote(steps[-1])})"
    return Detection(StopReason.FAILURE, "malformed", detail, count, start)
