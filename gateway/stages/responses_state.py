"""Responses API state: `previous_response_id` resolved from the gateway's store right after routing,
before tokens per minute and budgets hold the request's size and before any stage reads the conversation,
and each response stored after it (unless `store: false`). gateway/responses_store.py says why the provider
gets the full conversation and never the id."""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.responses_store import load, not_found, save
from gateway.stages.base import Stage
from gateway.wire.responses import input_items

NOTE = "responses_conversation"  # ctx.notes: the conversation the response answers (input items)


class ResponsesStateStage(Stage):
    name = "responses_state"

    async def on_request(self, ctx: RequestContext) -> None:
        if ctx.wire.name != "responses":
            return
        previous = ctx.body.get("previous_response_id")
        earlier: list[dict[str, object]] = []
        if isinstance(previous, str):
            try:
                stored = await load(ctx.services.store, ctx.tenant_label, previous)
            except Exception as exc:
                raise GatewayError(ErrorKind.INTERNAL, "The gateway could not read the previous response.") from exc
            if stored is None:
                raise not_found(previous, param="previous_response_id")
            earlier = list(stored.get("conversation") or [])
            body = {k: v for k, v in ctx.body.items() if k != "previous_response_id"}
            ctx.body = {**body, "input": [*earlier, *input_items(ctx.body)]}
        ctx.notes[NOTE] = input_items(ctx.body)

    async def on_response(self, ctx: RequestContext) -> None:
        conversation = ctx.notes.get(NOTE)
        response = ctx.response_body
        if conversation is None or response is None or ctx.body.get("store") is False:
            return
        if isinstance(response.get("id"), str) and isinstance(response.get("output"), list):
            await save(ctx.services.store, ctx.tenant_label, dict(response), conversation)
