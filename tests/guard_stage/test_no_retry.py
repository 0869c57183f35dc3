"""A blocked session is answered once: the SDKs, with their default retries, do not send it again.

Both SDKs retry 408, 409, 429 and 5xx (max_retries=2 by default, with backoff): a block answered with
one of those would reach the gateway 3 times and keep the agent waiting. The block is a 403 with
`x-should-retry: false`, so each SDK sends exactly one request and raises at once.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.guard_stage.conftest import metric

BLOCKS = 'cachegate_errors_total{api="%s",type="agent_loop_stopped"}'


def _block(gw: RunningGateway, api: str, session: str) -> Any:
    """Drive a globex session (max_llm_calls 6) to its stop, then return a client with default retries."""
    headers = {"x-session-id": session}
    if api == "openai":
        client: Any = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=TENANT_KEYS["globex"], default_headers=headers)
    else:
        client = anthropic.Anthropic(base_url=gw.url, api_key=TENANT_KEYS["globex"], default_headers=headers)
    assert client.max_retries == 2  # the SDK default, on purpose
    for i in range(7):  # 6 calls, then the stop
        _ask(client, api, f"question {i}")
    return client


def _ask(client: Any, api: str, text: str) -> Any:
    messages = [{"role": "user", "content": text}]
    if api == "openai":
        return client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=messages)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_blocked_session_is_sent_once(gw: RunningGateway, api: str) -> None:
    client = _block(gw, api, f"no-retry-{api}")
    before = metric(gw, BLOCKS % api)
    started = time.monotonic()
    error_class = openai.PermissionDeniedError if api == "openai" else anthropic.PermissionDeniedError
    with pytest.raises(error_class) as raised:
        _ask(client, api, "one more")
    elapsed = time.monotonic() - started
    assert metric(gw, BLOCKS % api) - before == 1  # one request reached the gateway: no retry
    assert elapsed < 0.4  # the SDKs' first backoff is >= 0.5 s: none happened
    error = raised.value
    assert error.status_code == 403 and error.response.headers["x-should-retry"] == "false"
    body = error.body if api == "openai" else error.body["error"]  # type: ignore[index]
    assert body["type"] == "agent_loop_stopped" and body["code"] == "MAX_STEPS"  # type: ignore[index]
