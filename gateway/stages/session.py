"""Agent session identity: header x-session-id, else the body fields each API has for it.

Fallbacks (documented in the README): OpenAI `prompt_cache_key`, then `user`; Anthropic
`metadata.user_id`. Requests with none are session-less: proxied, never grouped with others.
"""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.stages.base import Stage

MAX_SESSION_ID = 200


class SessionStage(Stage):
    name = "session"

    async def on_request(self, ctx: RequestContext) -> None:
        session = ctx.headers.get("x-session-id") or ctx.wire.session_fallback(ctx.body)
        if session:
            ctx.session_id = session[:MAX_SESSION_ID]
            ctx.response_headers["x-cachegate-session"] = ctx.session_id
