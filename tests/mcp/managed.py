"""Managed keys for the MCP tests, issued over the admin API with their own policy."""

from __future__ import annotations

from typing import Any

import httpx

from tests.gateway_harness import ADMIN_HEADERS, RunningGateway


def managed_key(gw: RunningGateway, mcp_policy: dict[str, Any], tenant: str = "acme") -> str:
    """A new managed key of `tenant` with `policy.mcp` overrides; its secret."""
    body = {"tenant": tenant, "name": "mcp-test", "policy": {"mcp": mcp_policy}}
    response = httpx.post(f"{gw.url}/admin/keys", json=body, headers=ADMIN_HEADERS)
    response.raise_for_status()
    secret: str = response.json()["secret"]
    return secret


def bearer(secret: str, session: str | None = None) -> dict[str, str]:
    headers = {"authorization": f"Bearer {secret}"}
    return {**headers, "x-session-id": session} if session else headers
