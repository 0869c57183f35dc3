"""The stages read the request's headers from a dict (gateway/api/headers.py `request_headers`): the same
values Starlette's `Headers.get` gives, found without a walk of the header list a lookup."""

from __future__ import annotations

from starlette.requests import Request

from gateway.api.headers import request_headers

RAW = [
    (b"authorization", b"Bearer k"),
    (b"x-session-id", b"first"),
    (b"anthropic-beta", b"a,b"),
    (b"x-session-id", b"second"),  # sent twice: the first counts, as for Headers.get
    (b"x-cachegate-cache-ttl", b"30"),
    (b"user-agent", b"claude-cli/2.0 (external, cli) \xe9"),  # latin-1, as HTTP carries it
]


def test_request_headers_are_what_starlette_gives_for_every_name() -> None:
    request = Request({"type": "http", "method": "POST", "path": "/", "headers": RAW})
    found = request_headers(request)
    assert found == {name.decode(): request.headers[name.decode()] for name, _ in RAW}
    assert found["x-session-id"] == "first" and found["user-agent"].endswith("\xe9")
    assert "X-Session-Id".lower() in found and found.get("x-absent") is None


def test_names_sent_in_capitals_are_found_lower_case() -> None:
    request = Request({"type": "http", "method": "POST", "path": "/", "headers": [(b"X-Session-Id", b"s")]})
    assert request_headers(request) == {"x-session-id": "s"}
