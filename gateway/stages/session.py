"""Agent session identity: header x-session-id, else the body fields each API has for it.

Fallbacks (documented in the README): OpenAI `prompt_cache_key`, then `user`; Anthropic
`metadata.user_id`. Requests with none are session-less: proxied, never grouped with others.

The id is caller-chosen, so it goes through `gateway.ids.safe_id` before anything keys or echoes it.
"""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.ids import safe_id
from gateway.prompt_cache.session_key import with_tenant_cache_key
from gateway.stages.base import Stage

SESSION_HEADER = "x-cachegate-session"


class SessionStage(Stage):
    name = "session"

    async def on_request(self, ctx: RequestContext) -> None:
        header = ctx.headers.get("x-session-id")
        session = _header_text(header) if header else ctx.wire.session_fallback(ctx.body)
        if session:
            ctx.session_id = safe_id(session)
            ctx.response_headers[SESSION_HEADER] = ctx.session_id
        # Read above as the caller sent it; namespaced with the tenant before any stage can forward it.
        ctx.body = with_tenant_cache_key(ctx.body, ctx.tenant_label)


def _header_text(value: str) -> str:
    """The header as the caller wrote it: servers hand header bytes over as Latin-1, clients send UTF-8,
    so the same id reads the same from the header and from the body."""
    return value.encode("latin-1", "replace").decode("utf-8", "surrogateescape")
