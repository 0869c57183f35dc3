"""Caller-chosen session ids (x-session-id, `user`, `prompt_cache_key`, `metadata.user_id`) are hostile.

Whatever characters or length they have, the request the provider already answered must reach the
caller (200, ASCII-only headers), the in-flight gauge must return to zero (streams included), and the
id must become a stable internal key: never echoed raw, never cut so that two ids share one session.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import httpx
import orjson
import pytest

from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, running_gateway

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}

AUTH = {
    "openai": ("/v1/chat/completions", {"authorization": f"Bearer {TENANT_KEYS['acme']}"}),
    "anthropic": ("/v1/messages", {"x-api-key": TENANT_KEYS["acme"]}),
}
SOURCES = {"openai": ["header", "user", "prompt_cache_key"], "anthropic": ["header", "metadata.user_id"]}
CASES = [(api, source) for api, sources in SOURCES.items() for source in sources]
LONG_PREFIX = "p" * 200
BAD_VALUES = {
    "cjk": "用户",
    "emoji": "agent-🤖-7",
    "nul": "a\x00b",
    "crlf": "a\r\nx-injected: 1",
    "del": "a\x7fb",
    "huge": "i" * 10_000,
}
# What a raw HTTP/1.1 header can carry: CR, LF and NUL cannot be sent in one at all, and the HTTP server
# refuses DEL with its own 400 before the gateway (or a provider) ever sees the request.
HEADER_SAFE = ("cjk", "emoji", "huge")
SAFE_SESSION = re.compile(r"^[\x21-\x7e]{1,200}$")
IN_FLIGHT = re.compile(r"^cachegate_in_flight_requests (\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    # Every stage on (the defaults): guard, compaction, caches all see the session id.
    with running_gateway() as gateway:
        yield gateway


def request_body(api: str, source: str, session: str, stream: bool) -> dict[str, Any]:
    # Unique text: the response cache must not answer, the provider must be called (and paid).
    text = f"hello {uuid.uuid4().hex}"
    body: dict[str, Any] = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
    if api == "anthropic":
        body = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": text}]}
    if stream:
        body["stream"] = True
    if source == "metadata.user_id":
        body["metadata"] = {"user_id": session}
    elif source != "header":
        body[source] = session
    return body


def raw_post(
    gw: RunningGateway, api: str, body: dict[str, Any], session_header: bytes | None
) -> tuple[int, bytes, bytes]:
    """POST over a plain socket: the header value goes out as the exact bytes given (no client-side
    encoding checks). Returns (status, raw header block, body)."""
    path, headers = AUTH[api]
    url = urlparse(gw.url)
    payload = orjson.dumps(body)
    lines = [f"POST {path} HTTP/1.1".encode(), f"host: {url.netloc}".encode(), b"connection: close"]
    lines += [f"{name}: {value}".encode() for name, value in headers.items()]
    lines += [b"content-type: application/json", f"content-length: {len(payload)}".encode()]
    if session_header is not None:
        lines.append(b"x-session-id: " + session_header)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + payload)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received, "the gateway dropped the connection without a response"
    head, _, rest = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head, rest


def send(gw: RunningGateway, api: str, source: str, session: str, stream: bool) -> tuple[int, bytes, bytes]:
    body = request_body(api, source, session, stream)
    header = session.encode() if source == "header" else None
    return raw_post(gw, api, body, header)


def header_value(head: bytes, name: bytes) -> str | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode("ascii")
    return None


def assert_ascii_headers(head: bytes) -> None:
    for line in head.split(b"\r\n"):
        assert all(0x20 <= byte < 0x7F or byte == 0x09 for byte in line), line


def provider_calls(gw: RunningGateway) -> int:
    return int(gw.sim_stats()["totals"].get("requests", 0))


def in_flight(gw: RunningGateway) -> float:
    found = IN_FLIGHT.search(gw.metrics())
    assert found, "cachegate_in_flight_requests missing from /metrics"
    return float(found.group(1))


def session_requests(gw: RunningGateway, session: str | None, expected: int) -> bool:
    """Whether the session explorer (request records, written in the background) shows `expected`
    requests of `session` within two seconds."""
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        view = httpx.get(f"{gw.url}/admin/dashboard/sessions/acme/{session}", headers=ADMIN)
        if view.status_code == 200 and view.json()["requests"] == expected:
            return True
        time.sleep(0.05)
    return False


def wait_in_flight_zero(gw: RunningGateway) -> None:
    deadline = time.monotonic() + 3.0
    while (value := in_flight(gw)) != 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert value == 0, f"in-flight gauge leaked: {value}"


def assert_completed(api: str, stream: bool, body: bytes) -> None:
    if not stream:
        payload = orjson.loads(body)
        assert ("choices" in payload) if api == "openai" else (payload.get("type") == "message"), payload
        return
    text = body.decode()
    assert '"error"' not in text and "event: error" not in text, text[-500:]
    assert ("[DONE]" in text) if api == "openai" else ("message_stop" in text), text[-500:]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(
    ("api", "source", "kind"),
    [(api, source, kind) for api, source in CASES for kind in BAD_VALUES if source != "header" or kind in HEADER_SAFE],
)
def test_hostile_ids_never_break_a_paid_request(
    gw: RunningGateway, api: str, source: str, kind: str, stream: bool
) -> None:
    before = provider_calls(gw)
    status, head, body = send(gw, api, source, BAD_VALUES[kind], stream)
    assert status == 200, body[:500]
    assert provider_calls(gw) == before + 1
    assert_ascii_headers(head)
    assert_completed(api, stream, body)
    session = header_value(head, b"x-cachegate-session")
    assert session is not None and SAFE_SESSION.match(session), session
    wait_in_flight_zero(gw)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("api", "source"), CASES)
def test_long_ids_sharing_a_prefix_are_different_sessions(
    gw: RunningGateway, api: str, source: str, stream: bool
) -> None:
    tag = uuid.uuid4().hex[:8]
    first, second = f"{LONG_PREFIX}{tag}-one", f"{LONG_PREFIX}{tag}-two"
    sessions = []
    for session in (first, second, first):
        status, head, body = send(gw, api, source, session, stream)
        assert status == 200, body[:500]
        sessions.append(header_value(head, b"x-cachegate-session"))
    assert sessions[0] and sessions[1] and sessions[0] != sessions[1]
    assert sessions[2] == sessions[0], "the same id must map to the same session every time"
    assert session_requests(gw, sessions[0], 2) and session_requests(gw, sessions[1], 1)
    wait_in_flight_zero(gw)


@pytest.mark.parametrize(("api", "source"), CASES)
def test_readable_ids_are_kept_and_hostile_ones_are_stable(gw: RunningGateway, api: str, source: str) -> None:
    readable = f"agent-{uuid.uuid4().hex[:8]}"
    _, head, _ = send(gw, api, source, readable, False)
    assert header_value(head, b"x-cachegate-session") == readable
    hostile = f"用户-{uuid.uuid4().hex[:8]}"
    seen = {header_value(send(gw, api, source, hostile, stream)[1], b"x-cachegate-session") for stream in (False, True)}
    assert len(seen) == 1 and None not in seen


def test_body_ids_with_sdk_clients(gw: RunningGateway) -> None:
    """The SDKs send these ids in the JSON body; both must get their answer."""
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": f"hi {uuid.uuid4().hex}"}], user="用户\r\n"
    )
    assert raw.http_response.status_code == 200 and raw.parse().choices
    answer = gw.anthropic().messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=16,
        messages=[{"role": "user", "content": f"hi {uuid.uuid4().hex}"}],
        metadata={"user_id": "🤖" * 300},
    )
    assert answer.http_response.status_code == 200 and answer.parse().content
    assert SAFE_SESSION.match(answer.headers["x-cachegate-session"])
    wait_in_flight_zero(gw)


def test_httpx_refuses_nothing_we_accept(gw: RunningGateway) -> None:
    """A client that sends the header as UTF-8 bytes through a normal HTTP library gets its answer."""
    path, headers = AUTH["openai"]
    response = httpx.post(
        gw.url + path,
        json=request_body("openai", "header", "", False),
        headers={**headers, "x-session-id": "会话-ünïcode".encode()},
    )
    assert response.status_code == 200, response.text
    assert SAFE_SESSION.match(response.headers["x-cachegate-session"])
    wait_in_flight_zero(gw)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_client_leaving_mid_stream_releases_the_slot(gw: RunningGateway, api: str) -> None:
    """A caller hanging up after the first bytes: the in-flight slot is released either way."""
    path, headers = AUTH[api]
    body = request_body(api, "header", "", True)
    body["messages"][0]["content"] = "a long answer please " * 50
    with (
        httpx.Client() as client,
        client.stream(
            "POST", gw.url + path, json=body, headers={**headers, "x-session-id": "用户".encode()}
        ) as response,
    ):
        assert response.status_code == 200
        next(response.iter_raw())
    wait_in_flight_zero(gw)
