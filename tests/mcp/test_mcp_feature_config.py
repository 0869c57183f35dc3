"""The configuration of SSE upstreams, per-key upstream credentials and tool-call limits: refused at load
when the gateway could not serve it safely."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.config.mcp import McpAccess, McpServerConfig


@pytest.mark.parametrize(
    "server",
    [
        {"name": "old", "transport": "sse"},  # sse without a url
        {"name": "old", "transport": "sse", "url": "file:///etc/passwd"},
    ],
)
def test_an_sse_server_needs_an_http_url(server: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        McpServerConfig.model_validate(server)


@pytest.mark.parametrize(
    "access",
    [
        {"credentials": {"github": {"Authorization": "Bearer ghp_abc"}}},  # a value, not a variable's name
        {"credentials": {"github": {"bad header": "GITHUB_TOKEN"}}},
        {"key_limits": {"calls_per_minute": 0}},
        {"tenant_limits": {"budgets": [{"calls": 10, "window": "week"}]}},
        {"tenant_limits": {"budgets": [{"calls": 0, "window": "day"}]}},
    ],
)
def test_credentials_and_limits_the_gateway_could_not_apply_are_refused(access: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        McpAccess.model_validate(access)


def test_limits_and_credentials_load() -> None:
    access = McpAccess.model_validate(
        {
            "credentials": {"github": {"Authorization": "ACME_GITHUB_MCP_AUTH"}},
            "key_limits": {"calls_per_minute": 60},
            "tenant_limits": {"budgets": [{"calls": 1000, "window": "month"}]},
        }
    )
    assert access.key_limits.any and access.tenant_limits.any and not McpAccess().key_limits.any
