"""A gateway fronting two MCP servers the tests start: 'files' over Streamable HTTP (tests/mcp/tool_server.py
in a thread) and 'local', the same tools over stdio (a process the gateway starts). Tenant acme may use
every tool; globex only the files server, without its flaky tool."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway.config import hash_key
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.mcp.tool_server import build_server
from tests.servers import run_app_in_thread

REPO = Path(__file__).resolve().parents[2]
UPSTREAM_SECRET_ENV = "CACHEGATE_TEST_MCP_TOKEN"
UPSTREAM_SECRET = "upstream-secret-123"
MAX_RESULT_BYTES = 8192
CLOSED_PORT = 9  # discard: nothing listens there on the test machines


@pytest.fixture(scope="package")
def tool_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-root")
    (root / "notes.txt").write_text("hello from the file tool\n")
    (root / "big.txt").write_text("x" * (2 * MAX_RESULT_BYTES))
    return root


@pytest.fixture(scope="package")
def upstream_url(tool_root: Path) -> Iterator[str]:
    app = build_server(tool_root).streamable_http_app(streamable_http_path="/mcp")
    with run_app_in_thread(app) as url:
        yield f"{url}/mcp"


def mcp_settings(upstream_url: str, tool_root: Path) -> dict[str, Any]:
    servers = [
        {"name": "files", "url": upstream_url, "headers_env": {"x-upstream-token": UPSTREAM_SECRET_ENV}},
        {
            "name": "local",
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "tests.mcp.tool_server", "stdio", str(tool_root)],
            "cwd": str(REPO),
        },
        {"name": "down", "url": f"http://127.0.0.1:{CLOSED_PORT}/mcp", "timeout_s": 2},  # nothing listens
    ]
    globex = {"files_only": {"allow_servers": ["files"], "deny_tools": ["*__flaky"]}}
    tenants = [
        {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])]},
        {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "policy": {"mcp": globex["files_only"]}},
    ]
    return {**gateway_settings(), "tenants": tenants, "mcp": {"servers": servers, "max_result_bytes": MAX_RESULT_BYTES}}


@pytest.fixture(scope="package")
def gw(upstream_url: str, tool_root: Path) -> Iterator[RunningGateway]:
    os.environ[UPSTREAM_SECRET_ENV] = UPSTREAM_SECRET
    with running_gateway(**mcp_settings(upstream_url, tool_root)) as gateway:
        yield gateway


@asynccontextmanager
async def mcp_client(url: str, headers: dict[str, str], **options: Any) -> AsyncIterator[Client]:
    """The MCP SDK's client on the gateway's /mcp, with these headers on every request."""
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    async with http, Client(streamable_http_client(url, http_client=http), cache=None, **options) as client:
        yield client


def key_headers(tenant: str = "acme", session: str | None = None) -> dict[str, str]:
    headers = {"authorization": f"Bearer {TENANT_KEYS[tenant]}"}
    return {**headers, "x-session-id": session} if session else headers
