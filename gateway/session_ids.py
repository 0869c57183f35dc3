"""Agent session identity: header x-session-id, else a coding CLI's own session header, else the body
fields each API has for it.

Precedence (documented in the README): `x-session-id`; then `X-Claude-Code-Session-Id` (Claude Code),
`session-id` and `thread-id` (Codex); then the body: OpenAI `prompt_cache_key`, then `user`; Anthropic
`metadata.user_id` (its `session_id` when it is Claude Code's JSON string). Requests with none are
session-less: proxied, never grouped with others.

The id is caller-chosen, so it goes through `gateway.ids.safe_id` before anything keys or echoes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.ids import safe_id
from gateway.wire.base import WireFormat

# In order: the gateway's own header, then the ones coding CLIs send by themselves (docs/design/clients.md).
SESSION_REQUEST_HEADERS = ("x-session-id", "x-claude-code-session-id", "session-id", "thread-id")


def session_id_of(headers: Mapping[str, str], wire: WireFormat, body: dict[str, Any]) -> str | None:
    """The request's session id, made safe to key and echo (None: session-less)."""
    header = next((value for name in SESSION_REQUEST_HEADERS if (value := headers.get(name))), None)
    session = header_text(header) if header else wire.session_fallback(body)
    return safe_id(session) if session else None


def header_text(value: str) -> str:
    """The header as the caller wrote it: servers hand header bytes over as Latin-1, clients send UTF-8,
    so the same id reads the same from the header and from the body."""
    return value.encode("latin-1", "replace").decode("utf-8", "surrogateescape")
