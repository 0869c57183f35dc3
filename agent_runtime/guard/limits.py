"""Hard per-session limits, the backstop behind every detector.

``check_limits(counters, limits, steps)`` returns a ``Detection`` when usage has reached a limit, i.e.
when there is no room left for another LLM call: ``counters`` hold the usage *so far* and a limit trips
at ``usage >= limit``. ``None`` switches a limit off.

==========================  ===========  =================================================
limit                       reason       default (why)
==========================  ===========  =================================================
``max_llm_calls``           MAX_STEPS    500 (OpenHands' cap; real sessions use < 150)
``max_tool_calls``          MAX_STEPS    1000
``max_total_tokens``        BUDGET       off (a per-key budget, set by the operator)
``max_cost_usd``            BUDGET       off (same)
``max_wall_time_s``         TIMEOUT      off (agents legitimately run for hours)
``max_consecutive_errors``  ERRORS       10 tool errors in a row, any calls (real: <= 3)
==========================  ===========  =================================================

Consecutive errors are counted from ``steps`` (trailing tool steps with ``is_error``; text steps are
transparent), so both consumers get them from the same parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .detection import Detection, StopReason
from .steps import Step, StepKind

__all__ = ["GuardLimits", "SessionCounters", "check_limits", "trailing_errors"]


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """Per-session caps; ``None`` disables one."""

    max_llm_calls: int | None = 500
    max_tool_calls: int | None = 1000
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_time_s: float | None = None
    max_consecutive_errors: int | None = 10


@dataclass(frozen=True, slots=True)
class SessionCounters:
    """A session's usage so far, kept by the consumer (the gateway per session id, the runtime per run)."""

    llm_calls: int = 0
    tool_calls: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0


def trailing_errors(steps: Sequence[Step]) -> tuple[int, int]:
    """How many tool calls at the end of ``steps`` failed in a row, and the index of the first."""
    start, count = len(steps), 0
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if step.kind is not StepKind.TOOL_CALL:
            continue
        if not step.is_error:
            break
        start, count = index, count + 1
    return count, start


def check_limits(counters: SessionCounters, limits: GuardLimits, steps: Sequence[Step] = ()) -> Detection | None:
    """The first limit reached, in the table's order, or ``None``."""
    usage: list[tuple[str, StopReason, float, float | None, str]] = [
        ("max_llm_calls", StopReason.MAX_STEPS, counters.llm_calls, limits.max_llm_calls, "LLM calls"),
        ("max_tool_calls", StopReason.MAX_STEPS, counters.tool_calls, limits.max_tool_calls, "tool calls"),
        ("max_total_tokens", StopReason.BUDGET, counters.total_tokens, limits.max_total_tokens, "tokens"),
        ("max_cost_usd", StopReason.BUDGET, counters.cost_usd, limits.max_cost_usd, "USD spent"),
        ("max_wall_time_s", StopReason.TIMEOUT, counters.elapsed_s, limits.max_wall_time_s, "seconds"),
    ]
    for name, reason, used, limit, unit in usage:
        if limit is not None and used >= limit:
            detail = f"{used:g} {unit} reached the session limit of {limit:g}"
            return Detection(reason, name, detail, round(used), len(steps))
    if limits.max_consecutive_errors is not None:
        errors, start = trailing_errors(steps)
        if errors >= limits.max_consecutive_errors:
            detail = f"the last {errors} tool calls all failed (limit {limits.max_consecutive_errors})"
            return Detection(StopReason.ERRORS, "max_consecutive_errors", detail, errors, start)
    return None
