"""Who calls the MCP endpoint (per HTTP request): the cachegate key (the tenant, the key's policy) and
the agent session.

The key is read like on the model side (Authorization: Bearer, x-api-key) and stays here: upstreams
never see it. The session is the guard's: x-session-id, else a coding CLI's own session header, as on
the model side (gateway/stages/session.py), else the MCP session id, so one agent run's tool calls and
model calls share strikes and blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from gateway.auth import KeyIdentity, KeyRing, presented_key
from gateway.config import PolicyConfig, effective_policy
from gateway.ids import safe_id
from gateway.session_ids import SESSION_REQUEST_HEADERS, header_text

CALLER = "cachegate.mcp.caller"  # the ASGI scope key the endpoint puts the authenticated caller under
# The caller of the HTTP request being handled, for what the SDK runs before any handler (no context).
CURRENT_CALLER: ContextVar[McpCaller | None] = ContextVar("cachegate_mcp_caller", default=None)
MCP_SESSION_HEADER = "mcp-session-id"
MAX_POLICIES = 4096


@dataclass(frozen=True, eq=False)
class McpCaller:
    identity: KeyIdentity
    policy: PolicyConfig  # global, then the tenant's, then the key's overrides (no model: tools have none)
    session_id: str | None
    traceparent: str = ""  # the W3C header of the HTTP request, for the tool call's spans

    @property
    def tenant(self) -> str:
        return self.identity.tenant.name


def session_of(headers: Mapping[str, str]) -> str | None:
    names = (*SESSION_REQUEST_HEADERS, MCP_SESSION_HEADER)
    value = next((value for name in names if (value := headers.get(name))), None)
    return safe_id(header_text(value)) if value else None


class Callers:
    """Keys -> callers, each key's effective policy computed once."""

    def __init__(self, keys: KeyRing, base: PolicyConfig) -> None:
        self.keys, self.base = keys, base
        self._policies: dict[tuple[str, bytes], PolicyConfig] = {}

    def identify(self, headers: Mapping[str, str]) -> McpCaller | None:
        identity = self.keys.identify(presented_key(headers))
        if identity is None:
            return None
        return McpCaller(identity, self._policy(identity), session_of(headers), headers.get("traceparent", ""))

    def _policy(self, identity: KeyIdentity) -> PolicyConfig:
        key = (identity.tenant.name, orjson.dumps(identity.policy, option=orjson.OPT_SORT_KEYS))
        policy = self._policies.get(key)
        if policy is None:
            policy = effective_policy(self.base, identity.tenant.policy, identity.policy)
            if len(self._policies) >= MAX_POLICIES:  # key policies change at runtime: never grow without end
                self._policies.clear()
            self._policies[key] = policy
        return policy


def caller_of(ctx: ServerRequestContext[Any]) -> McpCaller:
    """The caller the endpoint authenticated for the HTTP request carrying this message."""
    request = ctx.request
    caller = request.scope.get(CALLER) if request is not None else None  # type: ignore[attr-defined]
    if not isinstance(caller, McpCaller):  # unreachable through the endpoint, which authenticates first
        raise MCPError(types.INVALID_REQUEST, "Not authenticated.")
    return caller
