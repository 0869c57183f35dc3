"""Per-key rate limits, seen through the official SDKs: every answer carries the provider's own headers,
and a key past its limit gets a 429 with retry-after (and the same headers)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import anthropic
import google.genai
import openai
import pytest
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from gateway.sim import create_sim_app
from tests.servers import run_app_in_thread
from tests.sim.conftest import sim_test_settings

RPM, TPM = 3, 100_000
HELLO: list[Any] = [{"role": "user", "content": "hello"}]


@pytest.fixture
def limited_url() -> Iterator[str]:
    with run_app_in_thread(create_sim_app(sim_test_settings(rate_limits={"rpm": RPM, "tpm": TPM}))) as url:
        yield url


def test_openai_headers_count_down_then_429(limited_url: str, oai: openai.OpenAI) -> None:
    one = openai.OpenAI(base_url=limited_url + "/v1", api_key="sk-one", max_retries=0)
    remaining = []
    for _ in range(RPM):
        raw = one.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=HELLO)
        assert raw.headers["x-ratelimit-limit-requests"] == str(RPM)
        assert raw.headers["x-ratelimit-limit-tokens"] == str(TPM)
        assert int(raw.headers["x-ratelimit-remaining-tokens"]) < TPM
        assert raw.headers["x-ratelimit-reset-requests"].endswith("s")  # a duration: 20s, 1m0s, 12ms
        remaining.append(int(raw.headers["x-ratelimit-remaining-requests"]))
    assert remaining == [2, 1, 0]
    with pytest.raises(openai.RateLimitError) as raised:
        one.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
    headers = raised.value.response.headers
    assert 1 <= int(headers["retry-after"]) <= 60 / RPM + 1
    assert headers["x-ratelimit-remaining-requests"] == "0"
    # Limits are per key: another key (another deployment) is untouched.
    other = openai.OpenAI(base_url=limited_url + "/v1", api_key="sk-two", max_retries=0)
    answered = other.responses.with_raw_response.create(model="gpt-4o-mini", input="hello")
    assert answered.headers["x-ratelimit-remaining-requests"] == str(RPM - 1)
    # Without limits (the default) there is nothing to report.
    raw = oai.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=HELLO)
    assert not any(name.startswith("x-ratelimit") for name in raw.headers)


def test_anthropic_headers_and_429(limited_url: str) -> None:
    claude = anthropic.Anthropic(base_url=limited_url, api_key="sk-ant-one", max_retries=0)
    for expected in range(RPM - 1, -1, -1):
        raw = claude.messages.with_raw_response.create(model="claude-sonnet-4-5", max_tokens=8, messages=HELLO)
        assert raw.headers["anthropic-ratelimit-requests-limit"] == str(RPM)
        assert raw.headers["anthropic-ratelimit-requests-remaining"] == str(expected)
        for name in ("input-tokens", "tokens"):
            assert raw.headers[f"anthropic-ratelimit-{name}-limit"] == str(TPM)
            assert int(raw.headers[f"anthropic-ratelimit-{name}-remaining"]) < TPM
        reset = datetime.strptime(raw.headers["anthropic-ratelimit-requests-reset"], "%Y-%m-%dT%H:%M:%S%z")
        assert 0 < (reset - datetime.now(UTC)).total_seconds() <= 61  # RFC 3339: when the bucket is full
    with pytest.raises(anthropic.RateLimitError) as raised:
        claude.messages.create(model="claude-sonnet-4-5", max_tokens=8, messages=HELLO)
    assert raised.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert int(raised.value.response.headers["retry-after"]) >= 1
    assert raised.value.response.headers["anthropic-ratelimit-requests-remaining"] == "0"


def test_token_limit_refuses_a_large_prompt_first(limited_url: str) -> None:
    oai = openai.OpenAI(base_url=limited_url + "/v1", api_key="sk-tokens", max_retries=0)
    big = [{"role": "user", "content": " ".join(f"w{i}" for i in range(40_000))}]  # ~80K tokens of 100K
    oai.chat.completions.create(model="gpt-4o-mini", messages=big)  # type: ignore[arg-type]
    with pytest.raises(openai.RateLimitError) as raised:
        oai.chat.completions.create(model="gpt-4o-mini", messages=big)  # type: ignore[arg-type]
    assert int(raised.value.response.headers["x-ratelimit-remaining-tokens"]) < 30_000
    assert raised.value.response.headers["x-ratelimit-remaining-requests"] == str(RPM - 1)  # not taken


def test_gemini_429(limited_url: str) -> None:
    client = google.genai.Client(
        api_key="gm-key", http_options=genai_types.HttpOptions(base_url=limited_url, api_version="v1beta")
    )
    for _ in range(RPM):
        client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    assert raised.value.code == 429
    assert raised.value.status == "RESOURCE_EXHAUSTED"
