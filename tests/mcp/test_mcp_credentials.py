"""Upstream credentials per tenant or key (``policy.mcp.credentials``): a managed key's record names the
environment variables of its own upstream credential, the gateway connects with it (its own connection),
and neither the caller's key nor its headers reach the upstream."""

from __future__ import annotations

import os

import httpx

from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway
from tests.mcp.conftest import UPSTREAM_SECRET, key_headers, mcp_client
from tests.mcp.managed import bearer, managed_key
from tests.mcp.test_mcp_gateway import text_of

OWN_SECRET_ENV = "CACHEGATE_TEST_MCP_OWN_TOKEN"
OWN_SECRET = "a-keys-own-upstream-secret"


async def test_a_managed_key_reaches_the_upstream_with_its_own_credential(gw: RunningGateway) -> None:
    os.environ[OWN_SECRET_ENV] = OWN_SECRET
    secret = managed_key(gw, {"credentials": {"files": {"x-upstream-token": OWN_SECRET_ENV}}})
    async with mcp_client(f"{gw.url}/mcp", {**bearer(secret), "x-extra": "caller-header"}) as client:
        own = text_of(await client.call_tool("files__whoami", {}))
        local = text_of(await client.call_tool("local__read_file", {"path": "notes.txt"}))
    async with mcp_client(f"{gw.url}/mcp", key_headers()) as client:
        shared = text_of(await client.call_tool("files__whoami", {}))
    assert f"x-upstream-token={OWN_SECRET}" in own and UPSTREAM_SECRET not in own
    assert secret not in own and "authorization" not in own and "caller-header" not in own
    assert local.startswith("hello")  # servers without a credential of the key's: the server's own
    assert f"x-upstream-token={UPSTREAM_SECRET}" in shared and OWN_SECRET not in shared
    assert TENANT_KEYS["acme"] not in shared


def test_a_credential_holding_a_value_not_a_variable_name_is_refused(gw: RunningGateway) -> None:
    policy = {"mcp": {"credentials": {"files": {"Authorization": "Bearer ghp_secret"}}}}
    response = httpx.post(f"{gw.url}/admin/keys", json={"tenant": "acme", "policy": policy}, headers=ADMIN_HEADERS)
    assert response.status_code == 400  # (the admin's own input is echoed back to the admin in the error)
