"""Prometheus metrics of the MCP endpoint (on the gateway's registry). Labels have bounded values: the
server is a configured name (anything else 'unknown'), outcome and action come from fixed sets."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from gateway.metrics import LATENCY_BUCKETS


class McpMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.tool_calls = Counter(
            "cachegate_mcp_tool_calls",
            "Tool calls at the MCP endpoint by server and outcome: ok, tool_error, denied, rate_limited, "
            "budget_exceeded, upstream_error, too_large, guard_stopped, failed",
            ["server", "outcome"],
            registry=r,
        )
        self.tool_seconds = Histogram(
            "cachegate_mcp_tool_call_seconds", "Tool call latency, gateway included", ["server"],
            buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.guard_decisions = Counter(
            "cachegate_mcp_guard_decisions", "Guard decisions on tool calls that acted: warn, nudge, stop, block",
            ["action", "reason", "detector"], registry=r,
        )  # fmt: skip
        self.requests = Counter(
            "cachegate_mcp_fast_path_requests",
            "POSTs to /mcp of a stateless tools/call or tools/list, by path: fast (gateway/mcp/fast.py) or sdk",
            ["path"], registry=r,
        )  # fmt: skip
        self.upstream_calls = Counter(
            "cachegate_mcp_upstream_calls",
            "Tool calls answered by an upstream, by server and client: direct (one JSON-RPC POST) or sdk",
            ["server", "client"], registry=r,
        )  # fmt: skip
        self.errors = Counter(
            "cachegate_mcp_errors", "MCP endpoint degradations: guard state, tool listing", ["kind"], registry=r
        )
