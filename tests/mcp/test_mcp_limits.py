"""Tool-call rate limits and budgets per key and per tenant (``policy.mcp.key_limits``, ``.tenant_limits``):
a call past one is refused with an MCP error the model sees, recorded with its own error class, and
replicas on one Redis count the same calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from gateway.mcp.errors import TOOL_CALLS_LIMITED
from tests.gateway_harness import ADMIN_HEADERS, RunningGateway, replicas_on_one_redis
from tests.mcp.conftest import key_headers, mcp_client, mcp_settings
from tests.mcp.managed import bearer, managed_key
from tests.mcp.test_mcp_gateway import wait_for_records

READ = {"path": "notes.txt"}


async def calls(gw: RunningGateway, headers: dict[str, str], count: int) -> list[str]:
    """`count` calls of one tool: "ok", or the refusal's error data type."""
    outcomes = []
    async with mcp_client(f"{gw.url}/mcp", headers) as client:
        for _ in range(count):
            try:
                await client.call_tool("files__read_file", READ)
                outcomes.append("ok")
            except MCPError as error:
                assert error.code == TOOL_CALLS_LIMITED and isinstance(error.error.data, dict)
                outcomes.append(error.error.data["type"])
    return outcomes


async def refused_record(gw: RunningGateway, session: str, error_class: str) -> dict[str, Any]:
    params = {"session": session, "error_class": error_class}
    for _ in range(100):
        response = httpx.get(f"{gw.url}/admin/requests", params=params, headers=ADMIN_HEADERS)
        if records := response.raise_for_status().json()["requests"]:
            record: dict[str, Any] = records[0]
            return record
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {error_class} record for session {session!r}")


async def test_a_keys_calls_per_minute_are_limited(gw: RunningGateway) -> None:
    secret = managed_key(gw, {"key_limits": {"calls_per_minute": 3}})
    assert await calls(gw, bearer(secret, "rate-1"), 4) == ["ok", "ok", "ok", "rate_limit_exceeded"]
    assert await calls(gw, key_headers(), 4) == ["ok"] * 4  # another key of the tenant: its own count
    record = await refused_record(gw, "rate-1", "rate_limit")
    assert record["status"] == 429 and record["error_code"] == "rate_limit_exceeded"
    assert record["mcp"]["outcome"] == "rate_limited"
    assert 'cachegate_mcp_tool_calls_total{outcome="rate_limited",server="files"}' in gw.metrics()


async def test_a_keys_call_budget_is_a_count_per_window(gw: RunningGateway) -> None:
    secret = managed_key(gw, {"key_limits": {"budgets": [{"calls": 2, "window": "day"}]}})
    assert await calls(gw, bearer(secret, "budget-1"), 3) == ["ok", "ok", "tool_call_budget_exceeded"]
    record = await refused_record(gw, "budget-1", "budget")
    assert record["status"] == 402 and record["error"] == "budget_exceeded"
    assert len(await wait_for_records(gw, "budget-1", 3)) == 3


async def test_a_tenant_budget_is_shared_by_its_keys_across_replicas(upstream_url: str, tool_root: Path) -> None:
    settings = mcp_settings(upstream_url, tool_root)
    acme = {
        **settings["tenants"][0],
        "policy": {"mcp": {"tenant_limits": {"budgets": [{"calls": 3, "window": "month"}]}}},
    }
    files_only = {**settings["mcp"], "servers": settings["mcp"]["servers"][:1]}
    with replicas_on_one_redis(tenants=[acme, settings["tenants"][1]], mcp=files_only) as (a, b):
        secret = managed_key(a, {})
        for _ in range(100):  # replica b loads the new key (polled every 0.5 s)
            if b.services.keys.identify(secret) is not None:
                break
            await asyncio.sleep(0.05)
        outcomes = [
            *await calls(a, key_headers(), 1),
            *await calls(b, bearer(secret), 1),
            *await calls(b, key_headers(), 1),
            *await calls(a, bearer(secret), 1),
        ]
        globex = await calls(b, key_headers("globex"), 1)
    assert outcomes == ["ok", "ok", "ok", "tool_call_budget_exceeded"]
    assert globex == ["ok"]


@pytest.mark.parametrize("limits", [{"calls_per_minute": 0}, {"budgets": [{"calls": 5, "window": "week"}]}])
def test_invalid_limits_are_refused_when_a_key_is_issued(gw: RunningGateway, limits: dict[str, Any]) -> None:
    body = {"tenant": "acme", "policy": {"mcp": {"key_limits": limits}}}
    assert httpx.post(f"{gw.url}/admin/keys", json=body, headers=ADMIN_HEADERS).status_code == 400
