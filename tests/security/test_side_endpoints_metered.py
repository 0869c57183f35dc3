"""The endpoints beside chat (legacy completions, embeddings, Anthropic's and Gemini's count_tokens) are
governed like chat (issue 26, finding 4): rate limits and concurrency admit them, budgets refuse them once
spent (402, before the provider is called), and every billable call is priced from the provider's usage
into its answer, its request record and the spend metrics."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway
from tests.governance.test_rate_limits import limited

INSTRUCT = {"name": "instruct", "provider": "openai", "model": "gpt-3.5-turbo-instruct", "api_base": "embedded-sim"}
EMBED = {"name": "embed", "provider": "openai", "model": "text-embedding-3-small", "api_base": "embedded-sim"}
SIDE_MODELS = [
    INSTRUCT,
    {**INSTRUCT, "name": "instruct-litellm", "path": "litellm"},
    EMBED,
    {**EMBED, "name": "embed-litellm", "path": "litellm"},
]


def side_settings(limits: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    settings = limited(limits, **overrides)
    settings["models"] = settings["models"] + SIDE_MODELS
    return settings


def complete(gw: RunningGateway, text: str, model: str = "instruct", tenant: str = "acme", max_tokens: int = 8) -> Any:
    return gw.openai(tenant).completions.with_raw_response.create(model=model, prompt=text, max_tokens=max_tokens)


def embed(gw: RunningGateway, model: str = "embed") -> Any:
    return gw.openai().embeddings.with_raw_response.create(model=model, input=f"hello {uuid.uuid4()}")


def provider_calls(gw: RunningGateway) -> int:
    return int(gw.sim_stats()["totals"].get("requests", 0))


def record(gw: RunningGateway, request_id: str) -> dict[str, Any]:
    """The request's record, once the background writer has stored it."""
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    deadline = time.monotonic() + 5.0
    while True:
        found = httpx.get(f"{gw.url}/v1/requests/{request_id}", headers=headers)
        if found.status_code == 200 or time.monotonic() > deadline:
            assert found.status_code == 200, found.text
            data: dict[str, Any] = found.json()
            return data
        time.sleep(0.05)


def test_completions_and_embeddings_are_refused_once_the_budget_is_spent() -> None:
    with running_gateway(**side_settings({"budgets": [{"window": "day", "usd": 0.0002}]})) as gw:
        served = 0
        with pytest.raises(openai.APIStatusError) as refused:
            for i in range(40):  # ~5e-5 each: spent after about 4
                complete(gw, f"[[sim:tokens 8]] {i} {uuid.uuid4()}")
                served += 1
        assert 2 <= served < 40
        error = refused.value
        assert error.status_code == 402 and error.response.headers["x-should-retry"] == "false"
        assert error.body["code"] == "budget_exceeded"  # type: ignore[index]
        before = provider_calls(gw)
        for call in (lambda: complete(gw, "[[sim:text hi]]", "instruct-litellm"), lambda: embed(gw)):
            with pytest.raises(openai.APIStatusError) as again:
                call()
            assert again.value.status_code == 402
        assert provider_calls(gw) == before  # refused before the provider was called
        assert complete(gw, "[[sim:text ok]]", tenant="globex").http_response.status_code == 200  # its own budget


def test_parallel_side_requests_above_the_concurrency_limit_are_refused() -> None:
    settings = side_settings({"concurrent_requests": 2}, simulator_latency="realistic")
    with running_gateway(**settings) as gw, ThreadPoolExecutor(6) as pool:
        slow = "[[sim:tokens 40]]"  # ~0.25 s to the first token, ~0.5 s of decoding

        def one(i: int) -> int:
            try:
                return int(complete(gw, f"{slow} {i}", max_tokens=40).http_response.status_code)
            except openai.RateLimitError as error:
                assert "2 concurrent requests" in error.message
                return 429

        assert sorted(pool.map(one, range(6))) == [200, 200, 429, 429, 429, 429]

        def stream(i: int) -> int:  # a relayed stream holds its place until its last event
            body = {"model": "instruct", "prompt": f"{slow} s{i}", "max_tokens": 40, "stream": True}
            headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
            with httpx.stream("POST", f"{gw.url}/v1/completions", json=body, headers=headers, timeout=30) as r:
                r.read()
                return r.status_code

        assert sorted(pool.map(stream, range(4))) == [200, 200, 429, 429]
        assert complete(gw, "[[sim:text ok]]").http_response.status_code == 200  # the places were given back


def gemini_count(gw: RunningGateway) -> None:
    options = types.HttpOptions(base_url=gw.url, retry_options=types.HttpRetryOptions(attempts=1))
    client = genai.Client(api_key=TENANT_KEYS["acme"], http_options=options)  # closes its pool when collected
    client.models.count_tokens(model="gpt-4o-mini", contents="hello")


def test_every_side_endpoint_counts_against_the_rate_limit() -> None:
    claude = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hello"}]}
    calls: dict[str, Callable[[RunningGateway], Any]] = {
        "completions": lambda gw: complete(gw, "[[sim:text ok]]"),
        "embeddings": embed,
        "count_tokens": lambda gw: gw.anthropic().messages.count_tokens(**claude),
        "gemini countTokens": gemini_count,
    }
    with running_gateway(**side_settings({"requests_per_minute": 4})) as gw:
        for call in calls.values():
            call(gw)
        for name, call in calls.items():
            with pytest.raises((openai.RateLimitError, anthropic.RateLimitError, genai.errors.ClientError)) as over:
                call(gw)
            assert getattr(over.value, "status_code", getattr(over.value, "code", None)) == 429, name
        assert 'cachegate_rate_limited_requests_total{tenant="acme"} 4.0' in gw.metrics()


@pytest.mark.parametrize(("model", "stream"), [("instruct", False), ("instruct", True), ("instruct-litellm", False)])
def test_completions_are_priced_into_the_answer_the_record_and_the_metrics(model: str, stream: bool) -> None:
    with running_gateway(**side_settings({})) as gw:
        client = gw.openai()
        if stream:
            events = client.completions.create(
                model=model,
                prompt="[[sim:tokens 12]]",
                max_tokens=20,
                stream=True,
                stream_options={"include_usage": True},
            )
            usage = list(events)[-1].usage
            assert usage is not None and usage.completion_tokens == 12
            assert (usage.model_extra or {})["cachegate"]["cost_usd"] > 0  # the cost, in the usage event
            request_id = events.response.headers["x-request-id"]
        else:
            raw = complete(gw, "[[sim:tokens 6]]", model)
            assert float(raw.headers["x-cachegate-cost-usd"]) > 0
            request_id = raw.headers["x-request-id"]
        stored = record(gw, request_id or "")
        assert stored["cost_usd"] > 0 and stored["tokens"]["output"] > 0 and stored["tokens"]["input"] > 0
        assert f'cachegate_cost_usd_total{{model="{model}",tenant="acme"}}' in gw.metrics()


@pytest.mark.parametrize("model", ["embed", "embed-litellm"])
def test_embeddings_are_priced_into_the_answer_the_record_and_the_metrics(model: str) -> None:
    with running_gateway(**side_settings({})) as gw:
        raw = embed(gw, model)
        usage = raw.parse().usage
        assert float(raw.headers["x-cachegate-cost-usd"]) == pytest.approx(usage.prompt_tokens * 2e-8)
        stored = record(gw, raw.headers["x-request-id"])
        assert stored["cost_usd"] > 0 and stored["tokens"]["input"] == usage.prompt_tokens
        assert (
            f'cachegate_tokens_total{{kind="uncached_input",model="{model}",tenant="acme"}} {usage.prompt_tokens}.0'
            in (gw.metrics())
        )


def test_embeddings_hold_their_input_on_tokens_per_minute() -> None:
    """Embeddings count their tokens on the tenant's tokens per minute until the minute's tokens are spent."""
    text = "hello " * 300  # ~300 tokens
    with running_gateway(**side_settings({"tokens_per_minute": 2000})) as gw:
        served = 0
        with pytest.raises(openai.RateLimitError) as refused:
            for _ in range(20):
                gw.openai().embeddings.create(model="embed", input=text)
                served += 1
        assert 3 <= served < 20 and "2000 tokens per minute" in refused.value.message
