"""Parse: read the body (size limit) and validate it in the caller's API shape. Runs after auth so
unauthenticated callers learn nothing about the request format.

A session's request validates only the messages its last validated history did not hold
(gateway/history/validated.py): the rest are known by their facts, found from the body's bytes."""

from __future__ import annotations

import logging
from operator import attrgetter

import orjson

from gateway.api.body import check_depth, load_json
from gateway.context import RequestContext
from gateway.history.facts import MessageFacts
from gateway.history.validated import ValidatedHistories, validated
from gateway.history.view import RawHistory
from gateway.logs import log_failure
from gateway.session_ids import session_id_of
from gateway.stages.base import Stage
from gateway.wire.limits import validate_within_limits

log = logging.getLogger("cachegate.parse")
_SIZE = attrgetter("size")


class ParseStage(Stage):
    name = "parse"
    fail_closed = True

    def __init__(self, passed: ValidatedHistories = validated) -> None:
        self.passed = passed

    async def on_request(self, ctx: RequestContext) -> None:
        assert ctx.read_body is not None
        raw = await ctx.read_body()
        body = load_json(raw)
        field = ctx.wire.history_field
        ctx.raw_history = history = RawHistory.of(raw, body, field)
        session = session_id_of(ctx.headers, ctx.wire, body) if history is not None else None
        facts = _facts(ctx, session, history) if session is not None and history is not None else None
        known = self.passed.known(ctx.tenant_label, session, ctx.wire.name, facts) if session and facts else 0
        if known and facts:  # the known messages' depth was checked: the rest of the body's is
            await check_depth({**body, field: body[field][known:]}, len(raw) - sum(map(_SIZE, facts[:known])))
        else:
            await check_depth(body, len(raw))
        await validate_within_limits(ctx.wire, body, known)
        ctx.body = body
        if session and facts:
            self.passed.passed(ctx.tenant_label, session, ctx.wire.name, facts)


def _facts(ctx: RequestContext, session: str, history: RawHistory) -> list[MessageFacts] | None:
    """The history's facts when its bytes give them (the session's previous body: no serialization of the
    messages it repeats); None otherwise, or when the body is one no facts can be taken of (too deep to
    serialize: the depth check refuses it next)."""
    try:
        return ctx.open_history(session).known_facts(history.messages)
    except orjson.JSONEncodeError:  # nested past what orjson writes: the depth check refuses it
        return None
    except Exception:  # the request is validated whole
        log_failure(log, "the history's facts could not be taken before validation")
        return None
