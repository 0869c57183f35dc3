"""The fast path of /mcp (gateway/mcp/fast.py): the same requests, sent on the wire to a gateway with it
and to one without it (``mcp.fast_path: false``: every request through the MCP SDK), get the same
answers, byte for byte: results, tool errors, refusals (access, limits, the loop guard), unknown tools,
oversized results, bad params, and the requests the fast path leaves to the SDK; the fast gateway's
counter shows which path each took."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agent_clis.test_agent_clis import metric
from tests.gateway_harness import RunningGateway, running_gateway
from tests.mcp.conftest import key_headers, mcp_settings
from tests.mcp.managed import managed_key

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def sdk_gw(gw: RunningGateway, upstream_url: str, tool_root: Path) -> Iterator[RunningGateway]:
    """The same gateway with the fast path off (`gw` first: it sets the upstream credential's variable)."""
    settings = mcp_settings(upstream_url, tool_root)
    with running_gateway(**{**settings, "mcp": {**settings["mcp"], "fast_path": False}}) as gateway:
        yield gateway


def fast_requests(gw: RunningGateway, path: str) -> float:
    return metric(gw, "cachegate_mcp_fast_path_requests_total", f'path="{path}"')


def call(name: str, arguments: Any = None, request_id: int | str = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": META}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def wire(gw: RunningGateway, headers: dict[str, str], body: Any, **extra: str) -> tuple[int, str, bytes]:
    """One POST as a 2026-07-28 client sends it: the status, content type and body of the answer."""
    sent = {**headers, "accept": "application/json", "mcp-protocol-version": MODERN}
    if isinstance(body, dict):
        sent["mcp-method"] = body.get("method", "")
        if "name" in body.get("params", {}):
            sent["mcp-name"] = body["params"]["name"]
    sent.update(extra)
    content = body if isinstance(body, bytes) else httpx.Request("POST", "/", json=body).content
    response = httpx.post(f"{gw.url}/mcp", content=content, headers={"content-type": "application/json", **sent})
    return response.status_code, response.headers.get("content-type", ""), response.content


def conversation(gw: RunningGateway, run: str) -> list[tuple[int, str, bytes]]:
    """Every kind of answer, in an order that leaves each gateway in the same state (`run`: fresh sessions)."""
    acme, globex = key_headers(), key_headers("globex")
    one_call = {"key_limits": {"budgets": [{"calls": 1, "window": "lifetime"}]}}
    budget = {"authorization": f"Bearer {managed_key(gw, one_call)}"}
    guarded = key_headers(session=f"fast-guard-{run}")
    read = call("files__read_file", {"path": "notes.txt"})
    answers = [
        wire(gw, acme, {"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": {"_meta": META}}),
        wire(gw, acme, read),
        wire(gw, acme, call("local__read_file", {"path": "notes.txt"}, "stdio")),
        wire(gw, acme, call("files__read_file", {"path": "missing.txt"}, 2)),  # the tool's own error
        wire(gw, acme, call("files__read_file", {"path": "big.txt"}, 3)),  # over the result bound
        wire(gw, acme, call("files__nope", {}, 4)),  # unknown to the server
        wire(gw, acme, call("nowhere__read_file", {}, 5)),  # no such server
        wire(gw, acme, call("files__read_file", "not-an-object", 6)),  # bad params
        wire(gw, acme, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"_meta": META}}),  # no name
        wire(gw, globex, call("files__flaky", {}, 8)),  # a tool the key may not use
        wire(gw, budget, call("files__read_file", {"path": "notes.txt"}, 9)),
        wire(gw, budget, call("files__read_file", {"path": "notes.txt"}, 10)),  # past the key's budget
    ]
    answers += [wire(gw, guarded, read) for _ in range(6)]  # nudged on the 4th, stopped, then blocked
    # What the fast path leaves to the SDK: answered by it, as before.
    answers += [
        wire(gw, acme, b"{not json"),
        wire(gw, acme, [read]),  # a batch
        wire(gw, acme, {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": META}}),
        wire(gw, acme, {"jsonrpc": "2.0", "id": 11, "method": "prompts/list", "params": {"_meta": META}}),
        wire(gw, acme, read, **{"mcp-name": "files__other"}),  # headers disagreeing with the body
        wire(gw, acme, read, **{"mcp-protocol-version": "2099-01-01"}),
        wire(gw, acme, {**read, "params": {"name": "files__read_file"}}),  # no envelope
    ]
    return answers


def test_the_fast_path_answers_as_the_sdk_does(gw: RunningGateway, sdk_gw: RunningGateway) -> None:
    fast_before, sdk_before = fast_requests(gw, "fast"), fast_requests(gw, "sdk")
    fast, through_sdk = conversation(gw, "a"), conversation(sdk_gw, "b")
    for got, expected in zip(fast, through_sdk, strict=True):
        assert got == expected
    assert b"[loop guard] Possible loop" in fast[15][2] and b"Stopped by the loop guard" in fast[16][2]
    assert fast_requests(gw, "fast") == fast_before + 18  # the listing and every call with its envelope
    assert fast_requests(gw, "sdk") == sdk_before + 6  # read, then left to the SDK (the unknown version: unread)
    assert fast_requests(sdk_gw, "fast") == 0


HANDSHAKE = "2025-11-25"


def on_session(gw: RunningGateway, headers: dict[str, str], body: Any, session: str) -> tuple[int, str, bytes, bool]:
    """One POST as a handshake-era client sends it on its session: the answer (whether it names the session
    instead of its id, which differs between the gateways)."""
    sent = {**headers, "accept": "application/json, text/event-stream", "content-type": "application/json"}
    sent |= {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    response = httpx.post(f"{gw.url}/mcp", json=body, headers=sent)
    named = response.headers.get("mcp-session-id") == session
    return response.status_code, response.headers.get("content-type", ""), response.content, named


def session_conversation(gw: RunningGateway, run: str) -> list[tuple[int, str, bytes, bool]]:
    """A session opened, then every kind of answer on it (`run`: a fresh guard session)."""
    headers = key_headers(session=f"fast-session-{run}")
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "cli", "version": "1"}},
    }
    sent = {**headers, "accept": "application/json, text/event-stream", "content-type": "application/json"}
    opened = httpx.post(f"{gw.url}/mcp", json=initialize, headers=sent)
    session = opened.headers["mcp-session-id"]
    answers = [(opened.status_code, opened.headers["content-type"], opened.content, True)]
    bodies: list[Any] = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "files__read_file", "arguments": {}}},
        {"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "files__flaky", "arguments": 5}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nowhere__x"}},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "files__read_file", "arguments": {"path": "big.txt"}},
        },
    ]
    answers += [on_session(gw, headers, body, session) for body in bodies]
    read = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "local__read_file", "arguments": {"path": "notes.txt"}},
    }
    answers += [on_session(gw, headers, read, session) for _ in range(6)]  # nudged, stopped, blocked
    answers.append(on_session(gw, key_headers("globex"), read, session))  # another key: no such session
    answers.append(on_session(gw, headers, read, "no-such-session"))
    return answers


def test_a_sessions_calls_take_the_fast_path_and_answer_as_the_sdk_does(
    gw: RunningGateway, sdk_gw: RunningGateway
) -> None:
    fast_before = fast_requests(gw, "fast")
    fast, through_sdk = session_conversation(gw, "a"), session_conversation(sdk_gw, "b")
    for got, expected in zip(fast, through_sdk, strict=True):
        assert got == expected
    assert b"Stopped by the loop guard" in fast[11][2] and fast[-1][0] == fast[-2][0] == 404
    assert fast_requests(gw, "fast") == fast_before + 11  # the listing and the calls on the session


def hostile_requests(gw: RunningGateway) -> list[tuple[int, str, bytes]]:
    """What an attacker sends with a valid key: odd ids, names and params, deep and large values."""
    acme = key_headers()
    deep = b'{"a":' * 2000 + b'"x"' + b"}" * 2000
    bodies: list[Any] = [
        {**call("files__read_file", {"path": "notes.txt"}), "id": {"not": "an id"}},
        {**call("files__read_file", {"path": "notes.txt"}), "id": 10**40},
        {**call("files__read_file", {"path": "notes.txt"}), "id": None},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["files__read_file"]},
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 123, "_meta": META}}
        ).encode(),
        call("files__" + "r" * 100_000, {}),
        call("files__read_file", {"path": "../../../etc/passwd"}),
        json.dumps(call("files__read_file", {"path": "notes.txt", "extra": "\u0000\ud800"})).encode(),
        json.dumps(call("files__read_file", {"path": "DEEP"})).encode().replace(b'"DEEP"', deep),
        {"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "files__read_file", "_meta": META}},
        None,
        "tools/call",
    ]
    envelope = {"mcp-method": "tools/call", "mcp-name": "files__read_file"}  # as a client sends with its own body
    answers = [wire(gw, acme, body, **(envelope if isinstance(body, bytes) else {})) for body in bodies]
    invalid_utf8 = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\xff\xfe"}}'
    answers.append(wire(gw, acme, invalid_utf8, **envelope))
    return answers


def test_hostile_requests_get_the_sdks_answers_and_no_server_error(gw: RunningGateway, sdk_gw: RunningGateway) -> None:
    fast, through_sdk = hostile_requests(gw), hostile_requests(sdk_gw)
    for got, expected in zip(fast, through_sdk, strict=True):
        assert got[0] < 500, got
        assert got == expected
