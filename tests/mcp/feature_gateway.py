"""A gateway for the SSE, resources, limits and credentials tests: the package's servers (tests/mcp/conftest.py)
plus 'legacy', the same tools over the older HTTP+SSE transport (a server the tests start in a thread),
and tenant policies with tool-call limits and credentials of their own."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.sse import sse_client

from gateway.config.policy import deep_merge
from tests.gateway_harness import RunningGateway, running_gateway
from tests.mcp.conftest import UPSTREAM_SECRET, UPSTREAM_SECRET_ENV, mcp_settings
from tests.mcp.tool_server import sse_app
from tests.servers import run_app_in_thread

GLOBEX_SECRET_ENV = "CACHEGATE_TEST_MCP_GLOBEX_TOKEN"
GLOBEX_SECRET = "globex-own-upstream-secret"


@contextmanager
def sse_upstream(root: Path) -> Iterator[str]:
    """The test tool server over HTTP+SSE; yields its stream's URL."""
    with run_app_in_thread(sse_app(root)) as url:
        yield f"{url}/sse"


def feature_settings(upstream_url: str, sse_url: str, root: Path, globex_policy: dict[str, Any]) -> dict[str, Any]:
    settings = mcp_settings(upstream_url, root)
    legacy = {
        "name": "legacy",
        "transport": "sse",
        "url": sse_url,
        "headers_env": {"x-upstream-token": UPSTREAM_SECRET_ENV},
    }
    servers = [*settings["mcp"]["servers"], legacy]
    tenants = [
        {**t, "policy": deep_merge(t.get("policy", {}), globex_policy)} if t["name"] == "globex" else t
        for t in settings["tenants"]
    ]
    return {**settings, "tenants": tenants, "mcp": {**settings["mcp"], "servers": servers}}


@contextmanager
def feature_gateway(
    upstream_url: str, root: Path, globex_policy: dict[str, Any] | None = None
) -> Iterator[RunningGateway]:
    os.environ[UPSTREAM_SECRET_ENV] = UPSTREAM_SECRET
    os.environ[GLOBEX_SECRET_ENV] = GLOBEX_SECRET
    with (
        sse_upstream(root) as sse_url,
        running_gateway(**feature_settings(upstream_url, sse_url, root, globex_policy or {})) as gateway,
    ):
        yield gateway


@asynccontextmanager
async def sse_mcp_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The MCP SDK's HTTP+SSE client on `url` (the gateway's /mcp/sse), with these headers on every request."""
    async with Client(sse_client(url, headers=headers), cache=None) as client:
        yield client
