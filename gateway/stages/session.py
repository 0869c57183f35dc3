"""Agent session identity: header x-session-id, else a coding CLI's own session header, else the body
fields each API has for it.

Precedence (documented in the README): `x-session-id`; then `X-Claude-Code-Session-Id` (Claude Code),
`session-id` and `thread-id` (Codex); then the body: OpenAI `prompt_cache_key`, then `user`; Anthropic
`metadata.user_id` (its `session_id` when it is Claude Code's JSON string). Requests with none are
session-less: proxied, never grouped with others.

The id is caller-chosen, so it goes through `gateway.ids.safe_id` before anything keys or echoes it.
"""

from __future__ import annotations

from gateway.context import RequestContext
from gateway.ids import safe_id
from gateway.prompt_cache.session_key import with_tenant_cache_key
from gateway.stages.base import Stage

SESSION_HEADER = "x-cachegate-session"
# In order: the gateway's own header, then the ones coding CLIs send by themselves (docs/design/clients.md).
SESSION_REQUEST_HEADERS = ("x-session-id", "x-claude-code-session-id", "session-id", "thread-id")


class SessionStage(Stage):
    name = "session"

    async def on_request(self, ctx: RequestContext) -> None:
        header = next((value for name in SESSION_REQUEST_HEADERS if (value := ctx.headers.get(name))), None)
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
