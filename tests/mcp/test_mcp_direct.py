"""Direct upstream calls (gateway/mcp/direct.py): a Streamable HTTP server's listed tools are called with
one JSON-RPC POST instead of the SDK's client, seen in the records and the upstream-call metric; the
answers equal those of the same tool server behind the SDK's client (the stdio copy), on the wire; an
upstream answering with an event stream or a JSON-RPC error is read as the SDK's client reads it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send

from gateway.mcp.direct import DirectFailed, DirectHttp
from tests.agent_clis.test_agent_clis import metric
from tests.gateway_harness import RunningGateway
from tests.mcp.conftest import key_headers, mcp_client
from tests.mcp.test_mcp_fast_path import MODERN, call, wire
from tests.mcp.test_mcp_gateway import text_of, wait_for_records
from tests.servers import run_app_in_thread


def upstream_calls(gw: RunningGateway, server: str, client: str) -> float:
    return metric(gw, "cachegate_mcp_upstream_calls_total", f'client="{client}",server="{server}"')


async def test_an_http_servers_listed_tool_is_called_directly_and_stdio_through_the_sdk(gw: RunningGateway) -> None:
    direct, sdk = upstream_calls(gw, "files", "direct"), upstream_calls(gw, "local", "sdk")
    async with mcp_client(f"{gw.url}/mcp", key_headers(session="direct-1")) as client:
        await client.list_tools()
        over_http = await client.call_tool("files__read_file", {"path": "notes.txt"})
        over_stdio = await client.call_tool("local__read_file", {"path": "notes.txt"})
    assert text_of(over_http) == text_of(over_stdio) == "hello from the file tool\n"
    assert upstream_calls(gw, "files", "direct") == direct + 1
    assert upstream_calls(gw, "local", "sdk") == sdk + 1
    records = await wait_for_records(gw, "direct-1", 2)
    assert [r["mcp"]["upstream_client"] for r in records] == ["direct", "sdk"]


CALLS = [
    ("acme", "read_file", {"path": "notes.txt"}),  # success
    ("acme", "read_file", {"path": "missing.txt"}),  # the tool's own error
    ("acme", "read_file", {"path": "big.txt"}),  # a result over the size bound
    ("acme", "nope", {}),  # a tool the server does not have
    ("acme", "read_file", "not-an-object"),  # bad params
    ("globex", "flaky", {}),  # a tool the key may not use
]


@pytest.mark.parametrize(("tenant", "tool", "arguments"), CALLS)
def test_direct_answers_equal_the_sdk_clients_on_the_wire(
    gw: RunningGateway, tenant: str, tool: str, arguments: Any
) -> None:
    # The same tool server over HTTP (called directly) and over stdio (through the SDK's client).
    status, kind, body = wire(gw, key_headers(tenant), call(f"files__{tool}", arguments))
    assert (status, kind, body.replace(b"files__", b"local__")) == wire(
        gw, key_headers(tenant), call(f"local__{tool}", arguments)
    )


@pytest.fixture(scope="module")
def odd_upstream() -> Iterator[str]:
    """A server answering tools/call by the tool's name: `events` as an event stream (a notification, then
    the answer), `refuse` with a JSON-RPC error, `garbage` with a body that is no JSON-RPC answer."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        tool, rid = request["params"]["name"], request["id"]
        answer = {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {"content": [{"type": "text", "text": "from events"}], "resultType": "complete"},
        }
        if tool == "events":
            progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
            content = "".join(f"event: message\r\ndata: {json.dumps(m)}\r\n\r\n" for m in (progress, answer))
            kind = b"text/event-stream"
        elif tool == "refuse":
            error = {"code": -32602, "message": "No such tool here", "data": {"tool": tool}}
            content, kind = json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}), b"application/json"
        else:
            content, kind = "<html>oops</html>", b"text/html"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": content.encode()})

    with run_app_in_thread(app) as url:
        yield f"{url}/mcp"


async def test_an_answer_sent_as_an_event_stream_is_read_from_its_events(odd_upstream: str) -> None:
    direct = DirectHttp(odd_upstream, 5.0)
    try:
        result = await direct.call_tool(MODERN, "events", {}, {})
    finally:
        await direct.aclose()
    assert isinstance(result, types.CallToolResult) and text_of(result) == "from events"


async def test_an_upstreams_json_rpc_error_is_raised_as_the_sdk_raises_it(odd_upstream: str) -> None:
    direct = DirectHttp(odd_upstream, 5.0)
    try:
        with pytest.raises(MCPError) as refused:
            await direct.call_tool(MODERN, "refuse", {}, {})
        with pytest.raises(DirectFailed):
            await direct.call_tool(MODERN, "garbage", {}, {})
    finally:
        await direct.aclose()
    assert (refused.value.code, refused.value.message) == (-32602, "No such tool here")
    assert refused.value.error.data == {"tool": "refuse"}
