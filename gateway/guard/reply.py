"""What the client sees of a decision: the x-cachegate-guard header, a graceful stop, a block error.

Header: ``x-cachegate-guard: <action>; reason=<REASON>; detector=<name>`` (action warn, nudge, stop,
block; REASON a StopReason name such as LOOP or BUDGET), or ``terminate; reason=GOAL|FAILURE``.
"""

from __future__ import annotations

from urllib.parse import urlencode

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


def blocked(ctx: RequestContext, decision: Decision) -> GatewayError:
    """The typed error of a blocked session: type agent_loop_stopped, code = the reason's name, the status
    its API's clients show once (``WireFormat.block_status``: never 401/403, read as a bad key) and
    `x-should-retry: false`: the session stays blocked, so a client retry could only get the same answer.
    The message says how to go on: a new session, or an admin lifting the block."""
    assert decision.detection is not None and decision.message is not None
    return GatewayError(
        ErrorKind.AGENT_STOPPED,
        f"{decision.message} {how_to_reset(ctx)}",
        status=ctx.wire.block_status,
        code=decision.detection.reason.name,
        should_retry=False,
    )


def how_to_reset(ctx: RequestContext) -> str:
    """How a blocked session goes on. The ids are safe to echo: session ids are plain (gateway/ids.py),
    the tenant is the caller's own."""
    query = urlencode({"tenant": ctx.tenant_label, "session": ctx.session_id or ""})
    return (
        f"To reset it: POST /admin/guard/session/unblock?{query} (with an admin key); a new session (a new run "
        "of the agent, or a new x-session-id) starts clean."
    )
