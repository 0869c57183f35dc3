"""Every bad-input class gets a 4xx in the caller's API shape with a clear message, never a 500."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.gateway_harness import RunningGateway

OPENAI_OK: dict[str, Any] = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC_OK: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
}


def post(gw: RunningGateway, api: str, content: bytes) -> httpx.Response:
    path, headers = (
        ("/v1/chat/completions", {"authorization": "Bearer sk-acme-test"})
        if api == "openai"
        else ("/v1/messages", {"x-api-key": "sk-acme-test"})
    )
    return httpx.post(gw.url + path, content=content, headers={**headers, "content-type": "application/json"})


def error_of(api: str, response: httpx.Response) -> dict[str, Any]:
    payload = response.json()
    if api == "openai":
        assert set(payload) == {"error"} and {"message", "type", "param", "code"} <= set(payload["error"])
        return dict(payload["error"])
    assert payload["type"] == "error" and {"type", "message"} <= set(payload["error"])
    return dict(payload["error"])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("content", "expected_status", "fragment"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"", 400, "empty"),
        (b"[1, 2]", 400, "JSON object"),
    ],
)
def test_unparsable_bodies(gw: RunningGateway, api: str, content: bytes, expected_status: int, fragment: str) -> None:
    response = post(gw, api, content)
    assert response.status_code == expected_status
    error = error_of(api, response)
    assert error["type"] == "invalid_request_error" and fragment in error["message"]


@pytest.mark.parametrize(
    ("api", "patch", "fragment"),
    [
        ("openai", {"messages": "hello"}, "messages"),
        ("openai", {"messages": []}, "messages"),
        ("openai", {"model": 42}, "model"),
        ("openai", {"temperature": "hot"}, "temperature"),
        ("openai", {"stream": "yes"}, "stream"),
        ("openai", {"messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ("openai", {"messages": [{"role": "tool", "tool_call_id": "call_1", "content": "x"}]}, "tool"),
        (
            "openai",
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                    },
                    {"role": "user", "content": "next"},
                ]
            },
            "tool_call",
        ),
        ("anthropic", {"max_tokens": None}, "max_tokens"),
        ("anthropic", {"messages": None}, "messages"),
        # (`role: system` is not here: the gateway leaves it to the provider, tests/security/test_malformed_requests.py)
        ("anthropic", {"messages": [{"role": "tool", "content": "x"}]}, "role"),
        (
            "anthropic",
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}
                ]
            },
            "tool_use_id",
        ),
        (
            "anthropic",
            {
                "messages": [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                    {"role": "user", "content": "no result"},
                ]
            },
            "tool_result",
        ),
    ],
)
def test_invalid_fields(gw: RunningGateway, api: str, patch: dict[str, Any], fragment: str) -> None:
    import orjson

    body = {**(OPENAI_OK if api == "openai" else ANTHROPIC_OK), **patch}
    body = {k: v for k, v in body.items() if v is not None}
    response = post(gw, api, orjson.dumps(body))
    assert response.status_code == 400, response.text
    error = error_of(api, response)
    assert error["type"] == "invalid_request_error" and fragment in error["message"]


def test_unknown_model_both_sdks(gw: RunningGateway) -> None:
    with pytest.raises(openai.NotFoundError) as oai_error:
        gw.openai().chat.completions.create(model="gpt-99", messages=[{"role": "user", "content": "x"}])
    assert "gpt-99" in str(oai_error.value) and oai_error.value.code == "model_not_found"
    with pytest.raises(anthropic.NotFoundError) as ant_error:
        gw.anthropic().messages.create(model="claude-99", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert ant_error.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]


def test_oversized_body(gw: RunningGateway) -> None:
    big = "x" * (300 * 1024)  # the test gateway's limit is 256 KiB
    with pytest.raises(openai.APIStatusError) as error:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": big}])
    assert error.value.status_code == 413
    with pytest.raises(anthropic.APIStatusError) as ant_error:
        gw.anthropic().messages.create(
            model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": big}]
        )
    assert ant_error.value.status_code == 413 and ant_error.value.body["error"]["type"] == "request_too_large"  # type: ignore[index]


def test_sdk_maps_bad_request(gw: RunningGateway) -> None:
    with pytest.raises(openai.BadRequestError):
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=[])
    with pytest.raises(anthropic.BadRequestError):
        gw.anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=[])
