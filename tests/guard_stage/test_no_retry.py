"""A blocked session is answered once: the SDKs, with their default retries, do not send it again.

The OpenAI and Anthropic SDKs retry 408, 409, 429 and 5xx (max_retries=2 by default, with backoff), unless
the answer says `x-should-retry: false`. The block says so, with a 400 (Anthropic: a 409, which Claude Code
shows once where it resends a 400 without its betas; never a 401/403, which clients read as a bad key), so
each SDK sends exactly one request and raises at once. google-genai retries nothing by default; with its
retry options on (what Gemini CLI does) it retries 408, 429 and 5xx.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.guard_stage.conftest import metric

BLOCKS = 'cachegate_errors_total{api="%s",type="agent_loop_stopped"}'
APIS = ["openai", "anthropic", "responses", "gemini"]
ERRORS: dict[str, type[Exception]] = {
    "openai": openai.BadRequestError,
    "responses": openai.BadRequestError,
    "anthropic": anthropic.ConflictError,
    "gemini": genai_errors.ClientError,
}
STATUS = {"openai": 400, "responses": 400, "anthropic": 409, "gemini": 400}
HOW_TO_RESET = "POST /admin/guard/session/unblock?tenant=globex&session=no-retry-"


def _client(gw: RunningGateway, api: str, headers: dict[str, str]) -> Any:
    """The API's SDK with its default retries (google-genai: its retry options on, default codes)."""
    key = TENANT_KEYS["globex"]
    if api == "anthropic":
        client: Any = anthropic.Anthropic(base_url=gw.url, api_key=key, default_headers=headers)
    elif api == "gemini":
        retrying = genai_types.HttpRetryOptions(initial_delay=0.5)
        options = genai_types.HttpOptions(base_url=gw.url, headers=headers, retry_options=retrying)
        return genai.Client(api_key=key, http_options=options)
    else:
        client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, default_headers=headers)
    assert client.max_retries == 2  # the SDK default, on purpose
    return client


def _block(gw: RunningGateway, api: str, session: str) -> Any:
    """Drive a globex session (max_llm_calls 6) to its stop, then return a client with default retries."""
    client = _client(gw, api, {"x-session-id": session})
    for i in range(7):  # 6 calls, then the stop
        _ask(client, api, f"question {i}")
    return client


def _ask(client: Any, api: str, text: str) -> Any:
    messages = [{"role": "user", "content": text}]
    if api == "openai":
        return client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    if api == "responses":
        return client.responses.create(model="gpt-4o-mini", input=text)
    if api == "gemini":
        return client.models.generate_content(model="gpt-4o-mini", contents=text)
    return client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=messages)


@pytest.mark.parametrize("api", APIS)
def test_blocked_session_is_sent_once(gw: RunningGateway, api: str) -> None:
    client = _block(gw, api, f"no-retry-{api}")
    before = metric(gw, BLOCKS % api)
    with pytest.raises(ERRORS[api]) as raised:
        _ask(client, api, "one more")
    assert metric(gw, BLOCKS % api) - before == 1  # one request reached the gateway: no retry
    error: Any = raised.value
    assert "loop guard" in str(error) and f"{HOW_TO_RESET}{api}" in str(error)
    if api == "gemini":
        assert error.code == 400 and error.status == "FAILED_PRECONDITION"
        return
    assert error.status_code == STATUS[api] and error.response.headers["x-should-retry"] == "false"
    body = error.body["error"] if api == "anthropic" else error.body
    assert body["type"] == "agent_loop_stopped" and body["code"] == "MAX_STEPS"
