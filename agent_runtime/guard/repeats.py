"""``CallRepeats``: a session's tool calls counted as they become final, so a request whose newest step
cannot be part of any loop skips the detectors (work grows with the new steps, not with the window).

Every loop detector and the consecutive-errors limit need something of the *newest* step to trip
(``detectors``' table; thresholds at their meaningful minimums):

- ``detect_malformed`` / ``detect_monologue``: the newest step is broken, or a text step;
- ``detect_repeated_errors`` and ``max_consecutive_errors``: the newest tool call failed, and so did the
  call before it (a run of two failures);
- ``detect_identical_calls``, ``detect_cycle``, ``detect_no_progress``, ``detect_long_polling``: the
  newest call's key (call + result) occurs earlier in the sequence (a run of two, a period, a revisit).

So when the newest step is a tool call whose key occurs nowhere else in the session's steps, and that
did not fail right after another failure, no detector trips on any tail of them (``quiet``), whatever
``Step.waits`` / ``Step.at`` the consumer gives them later. Keys are counted once per step, when it is
final (its result can no longer change); the steps still open (the newest turn) are looked at on each
check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .limits import GuardLimits
from .policy import GuardThresholds
from .steps import Step, StepKind

__all__ = ["CallRepeats"]


def _below_a_pair(value: int | None) -> bool:
    """A run threshold met by a single step (a detector or limit that may trip on a call seen once)."""
    return value is not None and value <= 1


def _trips_on_anything(t: GuardThresholds, limits: GuardLimits) -> bool:
    """Thresholds of zero: the detector or limit trips with no step at all."""
    return any(
        value is not None and value <= 0
        for value in (t.no_progress_streak, t.monologue, t.malformed, limits.max_consecutive_errors)
    )


class CallRepeats:
    """How often each tool call key occurs among the final steps of one session (fed in order)."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str | None, ...]] = Counter()
        self.fed = 0  # steps fed so far (all kinds): the final steps of the session, in order
        self._failed = (False, False)  # whether the call before the last fed one, and the last, failed

    def feed(self, steps: Sequence[Step]) -> None:
        """Count the next final steps."""
        counts = self._counts
        for step in steps:
            if step.kind is StepKind.TOOL_CALL:
                counts[step.key] += 1
                self._failed = (self._failed[1], step.is_error)
        self.fed += len(steps)

    def quiet(self, steps: Sequence[Step], thresholds: GuardThresholds, limits: GuardLimits) -> bool:
        """True when no detector (nor the consecutive-errors limit) can trip on any tail of ``steps``: the
        session's steps, the first ``fed`` of them fed here. Reads only the steps not fed yet."""
        if _trips_on_anything(thresholds, limits) or _below_a_pair(thresholds.identical_calls):
            return False
        if len(steps) < self.fed:
            return False
        if not steps:
            return True
        newest = steps[-1]
        if newest.kind is not StepKind.TOOL_CALL:
            return False
        key = newest.key
        open_calls = [step for step in steps[self.fed :] if step.kind is StepKind.TOOL_CALL]
        if newest.is_error:
            errors_alone = _below_a_pair(thresholds.repeated_errors) or _below_a_pair(limits.max_consecutive_errors)
            before = open_calls[-2].is_error if len(open_calls) > 1 else self._failed[bool(open_calls)]
            if errors_alone or before:
                return False
        # The newest call is counted once: among the final steps, or among the open ones.
        return self._counts[key] + sum(1 for step in open_calls if step.key == key) == 1
