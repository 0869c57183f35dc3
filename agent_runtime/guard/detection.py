"""What a detector or limit reports: a ``Detection`` with a machine-readable ``StopReason``.

``Detection.count`` is how many steps the repetition spans so far (for the chanting detector: how many
times the repeated chunk appeared) and ``Detection.start`` the index where it began: a step index into
the sequence the detector was given (for chanting: a character offset in the streamed text; for hard
limits: the current position).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["LIMIT_REASONS", "Detection", "StopReason"]


class StopReason(StrEnum):
    """Why a session stopped, as clients see it (header, error body, runtime result)."""

    GOAL = "goal"  # the agent finished normally
    LOOP = "loop"  # the agent repeats itself: same calls, cycles, same failing call, same text
    NO_PROGRESS = "no_progress"  # the agent only revisits calls and results it already saw
    MAX_STEPS = "max_steps"  # LLM-call or tool-call cap
    BUDGET = "budget"  # token or cost cap
    TIMEOUT = "timeout"  # wall-time cap
    ERRORS = "errors"  # too many tool errors in a row (any calls)
    FAILURE = "failure"  # the model keeps answering empty or malformed responses
    ABORTED = "aborted"  # cancelled by the user or operator


# Hard limits skip the nudge: another try cannot bring a spent budget back.
LIMIT_REASONS = frozenset({StopReason.MAX_STEPS, StopReason.BUDGET, StopReason.TIMEOUT, StopReason.ERRORS})


@dataclass(frozen=True, slots=True)
class Detection:
    """A tripped detector or limit."""

    reason: StopReason
    detector: str
    detail: str  # names what repeats, e.g. "bash {"command":"ls"} ran 4 times in a row, same result"
    count: int
    start: int
