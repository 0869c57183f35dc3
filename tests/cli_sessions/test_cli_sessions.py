"""Sessions from the coding CLIs, sent as they send them (shapes from docs/design/clients.md).

Claude Code: header `X-Claude-Code-Session-Id` and `metadata.user_id` = a JSON string
{"device_id", "account_uuid", "session_id"}; Codex: headers `session-id` and `thread-id`. Precedence:
x-session-id, then those headers, then the body.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.ids import safe_id
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

DEVICE = "616ad367" + "0" * 52 + "cbf0"
HAIKU = {"name": "claude-haiku-4-5", "provider": "anthropic", "model": "claude-haiku-4-5", "api_base": "embedded-sim"}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    settings = gateway_settings()
    with running_gateway(**{**settings, "models": [*settings["models"], HAIKU]}) as gateway:
        yield gateway


def user_id(session: str) -> str:
    return json.dumps({"device_id": DEVICE, "account_uuid": "", "session_id": session}, separators=(",", ":"))


def claude_code(
    gw: RunningGateway,
    *,
    session: str | None,
    header: str | None = None,
    extra: dict[str, str] | None = None,
    model: str = "claude-sonnet-4-5",
    messages: list[Any] | None = None,
) -> httpx.Response:
    """A request as Claude Code sends it (auth, beta query and headers, metadata.user_id)."""
    headers = {"x-api-key": TENANT_KEYS["acme"], "anthropic-version": "2023-06-01", "x-app": "cli", **(extra or {})}
    if header:
        headers["X-Claude-Code-Session-Id"] = header
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 64,
        "system": [
            {
                "type": "text",
                "text": "You are a Claude agent. " + "rules " * 900,
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": messages or [{"role": "user", "content": f"[[sim:text hi]] {uuid.uuid4().hex}"}],
    }
    if session is not None:
        body["metadata"] = {"user_id": user_id(session)}
    response = httpx.post(f"{gw.url}/v1/messages?beta=true", json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return response


def test_claude_code_session_from_its_header_and_metadata(gw: RunningGateway) -> None:
    session = str(uuid.uuid4())
    both = claude_code(gw, session=session, header=session)
    assert both.headers["x-cachegate-session"] == session
    body_only = claude_code(gw, session=session)  # the JSON string's session_id, not the whole string
    assert body_only.headers["x-cachegate-session"] == session
    header_only = claude_code(gw, session=None, header=session)
    assert header_only.headers["x-cachegate-session"] == session


def test_precedence(gw: RunningGateway) -> None:
    ours, header, body = "ours-1", str(uuid.uuid4()), str(uuid.uuid4())
    explicit = claude_code(gw, session=body, header=header, extra={"x-session-id": ours})
    assert explicit.headers["x-cachegate-session"] == ours
    assert claude_code(gw, session=body, header=header).headers["x-cachegate-session"] == header


def test_metadata_that_is_not_claude_codes_json_is_the_id_itself(gw: RunningGateway) -> None:
    for value in ("user-42", "{not json", '{"device_id":"x"}', '{"session_id":""}'):
        body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "metadata": {"user_id": value}}
        body["messages"] = [{"role": "user", "content": f"hi {uuid.uuid4().hex}"}]
        response = httpx.post(f"{gw.url}/v1/messages", json=body, headers={"x-api-key": TENANT_KEYS["acme"]})
        assert response.headers["x-cachegate-session"] == safe_id(value)


def test_a_hostile_session_id_inside_the_json_is_made_safe(gw: RunningGateway) -> None:
    hostile = "用户\r\nx-injected: 1"
    response = claude_code(gw, session=hostile)
    assert response.headers["x-cachegate-session"] == safe_id(hostile) and "x-injected" not in response.headers


def test_codex_session_headers(gw: RunningGateway) -> None:
    session = "01a20a18-7ea4-7590-8808-db9f6dd060b1"
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "session-id": session, "thread-id": session}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"hi {uuid.uuid4().hex}"}]}
    response = httpx.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers)
    assert response.headers["x-cachegate-session"] == session
    thread_only = httpx.post(
        f"{gw.url}/v1/chat/completions", json=body, headers={**headers, "session-id": "", "thread-id": "t-1"}
    )
    assert thread_only.headers["x-cachegate-session"] == "t-1"


def test_haiku_side_calls_are_not_prefix_breaks_of_the_main_line(gw: RunningGateway) -> None:
    session = str(uuid.uuid4())
    turn1 = [{"role": "user", "content": "[[sim:text looking]] fix the bug"}]
    first = claude_code(gw, session=session, header=session, messages=turn1)
    assert first.headers["x-cachegate-prefix-break"] == "first_request"
    title = [{"role": "user", "content": "[[sim:text Bug fix]] Write a title for: fix the bug"}]
    side = claude_code(gw, session=session, header=session, model="claude-haiku-4-5", messages=title)
    assert side.headers["x-cachegate-prefix-break"] == "first_request"  # its own line, not model_changed
    turn2 = [*turn1, {"role": "assistant", "content": "looking"}, {"role": "user", "content": "[[sim:text ok]] go"}]
    second = claude_code(gw, session=session, header=session, messages=turn2)
    assert second.headers["x-cachegate-prefix-break"] == "none"
