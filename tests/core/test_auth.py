"""Virtual keys, tenants and the admin key."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from tests.gateway_harness import ADMIN_KEY, RunningGateway


def test_missing_and_invalid_keys_openai_shape(gw: RunningGateway) -> None:
    response = httpx.post(f"{gw.url}/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": []})
    assert response.status_code == 401 and response.json()["error"]["code"] == "missing_api_key"
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as error:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
    assert error.value.code == "invalid_api_key"


def test_invalid_key_anthropic_shape(gw: RunningGateway) -> None:
    client = anthropic.Anthropic(base_url=gw.url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as error:
        client.messages.create(model="claude-sonnet-4-5", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert error.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]


def test_admin_requires_admin_key(gw: RunningGateway) -> None:
    assert httpx.get(f"{gw.url}/admin/config").status_code == 401
    tenant = httpx.get(f"{gw.url}/admin/config", headers={"authorization": "Bearer sk-acme-test"})
    assert tenant.status_code == 401
    admin = httpx.get(f"{gw.url}/admin/config", headers={"authorization": f"Bearer {ADMIN_KEY}"})
    assert admin.status_code == 200
    assert "sha256" not in admin.text and "sk-" not in admin.text
    assert {t["name"] for t in admin.json()["tenants"]} == {"acme", "globex"}


def test_keys_never_reach_logs_or_responses(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    gw.openai().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "secret-prompt"}])
    # The client SDKs log their own requests at DEBUG; only the server side is under test.
    client_side = ("openai", "anthropic", "httpx", "httpcore")
    server_logs = [r.getMessage() for r in caplog.records if not r.name.startswith(client_side)]
    assert server_logs, "expected the gateway to log the request"
    text = "\n".join(server_logs) + gw.metrics()
    assert "sk-acme-test" not in text and "secret-prompt" not in text
