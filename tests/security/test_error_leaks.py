"""Provider failures reach the caller in the gateway's own words, never with internal URLs, LiteLLM's
exception text or class names, or keys; a provider's request-validation error passes as the provider sent
it, scrubbed only of secrets (tests/security/test_provider_errors.py)."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway_harness import running_gateway
from tests.security.upstream_probe import PROVIDER_KEY, PROVIDER_KEY_ENV, keyed_settings, send, trap_listener

USEFUL = "max_tokens: 99999 is greater than the maximum of 8192 for this model"
INTERNAL = "backend shard 7 at http://10.9.8.7:9000/infer (key sk-live-0a1b2c3d4e5f) failed; trace xyz"
CLASS_NAMES = ("litellm", "Exception", "BadRequestError", "NotFoundError", "APIError", "ClientConnector")


def _models(url: str, path: str) -> list[dict[str, Any]]:
    common = {"api_base": url, "path": path, "retries": 0, "api_key_env": PROVIDER_KEY_ENV}
    return [
        {"name": "fake-openai", "provider": "openai", "model": "gpt-4o-mini", **common},
        {"name": "fake-claude", "provider": "anthropic", "model": "claude-sonnet-4-5", **common},
    ]


ROUTES = [
    ("openai", "fake-openai"),
    ("anthropic", "fake-claude"),
    ("openai", "fake-claude"),
    ("anthropic", "fake-openai"),
]


def _error_message(text: str) -> str:
    """The error message of a JSON error body, or of the error event of a stream."""
    if text.lstrip().startswith("{"):
        message: str = json.loads(text)["error"]["message"]
        return message
    data = [line.removeprefix("data:").strip() for line in text.splitlines() if line.startswith("data:")]
    return str(next(json.loads(d)["error"]["message"] for d in data if '"error"' in d))


@pytest.fixture
def quiet_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG, logger="cachegate")
    yield caplog
    assert not [r for r in caplog.records if PROVIDER_KEY in r.getMessage()]


def _expect_clean(message: str, *, url: str) -> None:
    for leak in (PROVIDER_KEY, url, url.rsplit(":", 1)[-1], "10.9.8.7", "sk-live", "http://", *CLASS_NAMES):
        assert leak not in message, (leak, message)


@pytest.mark.parametrize("path", ["lean", "litellm"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_validation_error_keeps_the_providers_message_scrubbed(
    monkeypatch: pytest.MonkeyPatch, quiet_logs: pytest.LogCaptureFixture, path: str, stream: bool
) -> None:
    reply = {"type": "error", "error": {"type": "invalid_request_error", "message": f"{USEFUL}. {INTERNAL}"}}
    with trap_listener(400, reply) as provider:
        settings = keyed_settings(path, monkeypatch, models=_models(provider.url, path))
        with running_gateway(**settings) as gw:
            for wire, model in ROUTES:
                body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 99999}
                status, text, _ = send(gw, wire, {**body, "stream": stream})
                assert status == 400, (wire, model, text)
                message = _error_message(text)
                assert message.startswith(USEFUL), (wire, model, message)  # the provider's own words, first
                _expect_clean(message, url=provider.url)


@pytest.mark.parametrize("path", ["lean", "litellm"])
@pytest.mark.parametrize(
    ("status", "reply"),
    [
        (500, {"error": {"type": "api_error", "message": INTERNAL}}),
        (429, {"error": {"type": "rate_limit_error", "message": f"Rate limit for org-Gateway123 {INTERNAL}"}}),
        (400, None),  # the default reply: an echo of the gateway's credentials
    ],
    ids=["500", "429", "echo"],
)
def test_other_failures_show_no_provider_text(
    monkeypatch: pytest.MonkeyPatch,
    quiet_logs: pytest.LogCaptureFixture,
    path: str,
    status: int,
    reply: dict[str, Any] | None,
) -> None:
    with trap_listener(status, reply) as provider:
        settings = keyed_settings(path, monkeypatch, models=_models(provider.url, path))
        with running_gateway(**settings) as gw:
            for wire, model in ROUTES:
                body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}
                code, text, _ = send(gw, wire, body)
                assert 400 <= code < 600, text
                message = _error_message(text)
                if status != 400:  # a 400's text passes, scrubbed: the echo keeps no credential
                    assert message.startswith("The provider"), message
                _expect_clean(message, url=provider.url)
                assert "backend shard" not in message and "org-Gateway123" not in message
                assert "Bearer" not in message


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_unreachable_provider_names_no_address_or_class(
    monkeypatch: pytest.MonkeyPatch, quiet_logs: pytest.LogCaptureFixture, path: str
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: connections are refused
        settings = keyed_settings(path, monkeypatch, models=_models(url, path))
        with running_gateway(**settings) as gw:
            for wire, model in ROUTES:
                body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}
                code, text, _ = send(gw, wire, body)
                assert code == 502, text
                message = _error_message(text)
                _expect_clean(message, url=url)
