"""Session: names the request's agent session (gateway/session_ids.py says how), echoes it, and namespaces
the body's prompt-cache key with the tenant."""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.prompt_cache.session_key import with_tenant_cache_key
from gateway.session_ids import session_id_of
from gateway.stages.base import Stage

SESSION_HEADER = "x-cachegate-session"


class SessionStage(Stage):
    name = "session"

    async def on_request(self, ctx: RequestContext) -> None:
        if session := session_id_of(ctx.headers, ctx.wire, ctx.body):
            ctx.session_id = session
            ctx.response_headers[SESSION_HEADER] = session
        # Read above as the caller sent it; namespaced with the tenant before any stage can forward it.
        ctx.body = with_tenant_cache_key(ctx.body, ctx.tenant_label)
