"""A tool call's spans reach a real OTLP receiver: the MCP semantic conventions' SERVER span continuing
the caller's traceparent, and a CLIENT span for the upstream call; nothing of the arguments or result."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.mcp.conftest import key_headers, mcp_client, mcp_settings
from tests.observability.otlp_receiver import Receiver, otlp_receiver
from tests.observability.test_tracing import CLIENT, SERVER, spans_of


@pytest.fixture(scope="module")
def traced(upstream_url: str, tool_root: Path) -> Iterator[tuple[RunningGateway, Receiver]]:
    with otlp_receiver() as receiver:
        tracing = {"endpoint": receiver.url, "batch_delay_ms": 100}
        with running_gateway(**{**mcp_settings(upstream_url, tool_root), "tracing": tracing}) as gw:
            yield gw, receiver


async def test_a_tool_call_is_traced_with_the_mcp_conventions(traced: tuple[RunningGateway, Receiver]) -> None:
    gw, receiver = traced
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    headers = {**key_headers(session="traced-tools"), "traceparent": f"00-{trace_id}-{parent}-01"}
    async with mcp_client(f"{gw.url}/mcp", headers) as client:
        await client.list_tools()
        await client.call_tool("files__read_file", {"path": "notes.txt"})
    spans = spans_of(receiver, trace_id, 2)
    root = next(span for span in spans if span.kind == SERVER)
    upstream = next(span for span in spans if span.kind == CLIENT)
    assert root.parent_span_id == parent and root.name == "tools/call files__read_file"
    assert root.attributes["mcp.method.name"] == "tools/call"
    assert root.attributes["gen_ai.tool.name"] == "files__read_file"
    assert root.attributes["gen_ai.operation.name"] == "execute_tool"
    assert root.attributes["cachegate.session"] == "traced-tools" and root.attributes["cachegate.tenant"] == "acme"
    assert upstream.parent_span_id == root.span_id and upstream.name == "tools/call read_file"
    assert "notes.txt" not in str([span.attributes for span in spans])  # the arguments are the caller's data
