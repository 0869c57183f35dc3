"""What the client sees of a decision: the x-cachegate-guard header, a graceful stop, a block error.

Header: ``x-cachegate-guard: <action>; reason=<REASON>; detector=<name>`` (action warn, nudge, stop,
block; REASON a StopReason name such as LOOP or BUDGET), or ``terminate; reason=GOAL|FAILURE``.
"""

from __future__ import annotations

from agent_runtime.guard import Action, Decision, Detection, StopReason
from gateway.context import Reply, RequestContext
from gateway.errors import ErrorKind, GatewayError

HEADER = "x-cachegate-guard"
POLICY_HEADER = "x-cachegate-guard-policy"


def header_value(action: str, reason: StopReason, detector: str | None = None) -> str:
    value = f"{action}; reason={reason.name}"
    return f"{value}; detector={detector}" if detector else value


def report(ctx: RequestContext, action: Action, detection: Detection) -> None:
    ctx.response_headers[HEADER] = header_value(action.value, detection.reason, detection.detector)


def stop_reply(ctx: RequestContext, decision: Decision) -> None:
    """The graceful stop: a normal assistant answer, text only, in the caller's shape (streams replayed)."""
    assert decision.message is not None
    ctx.reply = Reply(body=ctx.wire.text_reply(ctx.model_name, decision.message), source="guard")


def blocked(decision: Decision) -> GatewayError:
    """The typed error of a blocked session: 403, type agent_loop_stopped, code = the reason's name, and
    `x-should-retry: false`: the session stays blocked, so a client retry could only get the same answer."""
    assert decision.detection is not None and decision.message is not None
    return GatewayError(
        ErrorKind.AGENT_STOPPED, decision.message, code=decision.detection.reason.name, should_retry=False
    )
