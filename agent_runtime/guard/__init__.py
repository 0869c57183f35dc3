"""Loop guard core: pure, framework-free detection of agent loops, shared by the gateway and the runtime.

Pipeline: conversation -> ``Step`` s (``steps``: hashed per message by ``parts``, paired by ``parser``)
-> detectors and hard limits (``detectors``, ``chanting``, ``limits``) -> ``evaluate`` / escalation
ladder (``policy``) -> ``Decision``.
``LoopGuard`` (``session``) is the stateful form for step-by-step consumers. See docs/loop-guard.md.
Only the standard library is used.
"""

from .chanting import ChantDetector
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
from .limits import GuardLimits, SessionCounters, check_limits, trailing_errors
from .parser import StepParser, steps_from_anthropic_messages, steps_from_openai_messages
from .parts import MessageParts, message_parts
from .policy import (
    DEFAULT_POLICY,
    Action,
    Decision,
    GuardPolicy,
    GuardThresholds,
    Strike,
    detect,
    escalate,
    evaluate,
    evaluate_history,
    nudge_message,
    stop_message,
)
from .repeats import CallRepeats
from .session import LoopGuard
from .steps import (
    Step,
    StepKind,
    canonical_json,
    content_text,
    digest,
    looks_like_error,
    make_empty_step,
    make_malformed_step,
    make_text_step,
    make_tool_step,
)

__all__ = [
    "DEFAULT_POLICY",
    "LIMIT_REASONS",
    "Action",
    "CallRepeats",
    "ChantDetector",
    "Decision",
    "Detection",
    "GuardLimits",
    "GuardPolicy",
    "GuardThresholds",
    "LoopGuard",
    "MessageParts",
    "SessionCounters",
    "Step",
    "StepKind",
    "StepParser",
    "StopReason",
    "Strike",
    "canonical_json",
    "check_limits",
    "content_text",
    "detect",
    "detect_cycle",
    "detect_identical_calls",
    "detect_long_polling",
    "detect_malformed",
    "detect_monologue",
    "detect_no_progress",
    "detect_repeated_errors",
    "digest",
    "escalate",
    "evaluate",
    "evaluate_history",
    "looks_like_error",
    "make_empty_step",
    "make_malformed_step",
    "make_text_step",
    "make_tool_step",
    "message_parts",
    "nudge_message",
    "steps_from_anthropic_messages",
    "steps_from_openai_messages",
    "stop_message",
    "trailing_errors",
]
