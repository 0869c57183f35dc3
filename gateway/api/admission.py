"""Admission for the requests served beside the chat pipeline (gateway/api/endpoints.py, Gemini's
countTokens): the same authentication and rate limits (requests per minute, concurrent requests) as every
other request, and the request's end, which gives its concurrency place and its holds back."""

from __future__ import annotations

import logging

import anyio

from gateway.context import RequestContext
from gateway.logs import log_failure
from gateway.pipeline import Pipeline
from gateway.stages.auth import AuthStage
from gateway.stages.rate_limit import RateLimitStage

AUTH, RATE_LIMIT = AuthStage(), RateLimitStage()
log = logging.getLogger("cachegate.proxy")


async def finish(ctx: RequestContext) -> None:
    """Run the request's finishers once, however it ended (a cancelled request still gives its place back)."""
    while ctx.finishers:
        done = ctx.finishers.pop(0)
        try:
            with anyio.CancelScope(shield=True):
                await done()
        except Exception:
            log_failure(log, "a request finisher failed")


async def admit(ctx: RequestContext) -> None:
    """Authenticate and admit the request (GatewayError when refused; a failing rate-limit store fails open,
    as in the pipeline). The caller runs `finish(ctx)` when the request ends."""
    await Pipeline([AUTH, RATE_LIMIT], [], ctx.services.metrics).run_request(ctx)
