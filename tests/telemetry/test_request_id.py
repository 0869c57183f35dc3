"""x-request-id on every answer (streamed, errors, auth failures), readable through the SDKs."""

from __future__ import annotations

import re

import anthropic
import openai
import pytest

from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway

HI = [{"role": "user", "content": "[[sim:text hi]]"}]
REQUEST_ID = re.compile(r"[0-9a-f]{32}")


def test_sdks_expose_the_request_id(gw: RunningGateway) -> None:
    reply = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=HI)  # type: ignore[arg-type]
    assert REQUEST_ID.fullmatch(reply._request_id or "")
    message = gw.anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=8, messages=HI)  # type: ignore[arg-type]
    assert REQUEST_ID.fullmatch(message._request_id or "")
    assert reply._request_id != message._request_id


def test_streams_carry_it(gw: RunningGateway) -> None:
    with gw.openai().chat.completions.with_streaming_response.create(
        model="gpt-4o-mini",
        messages=HI,  # type: ignore[arg-type]
        stream=True,
    ) as response:
        assert REQUEST_ID.fullmatch(response.headers["x-request-id"])
    with gw.anthropic().messages.stream(model="claude-sonnet-4-5", max_tokens=8, messages=HI) as stream:  # type: ignore[arg-type]
        assert REQUEST_ID.fullmatch(stream.response.headers["x-request-id"])


def test_errors_carry_it(gw: RunningGateway) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        gw.openai().chat.completions.create(model="gpt-nope", messages=HI)  # type: ignore[arg-type]
    assert REQUEST_ID.fullmatch(missing.value.request_id or "")
    with pytest.raises(anthropic.AuthenticationError) as denied:
        anthropic.Anthropic(base_url=gw.url, api_key="sk-wrong", max_retries=0).messages.create(
            model="claude-sonnet-4-5",
            max_tokens=8,
            messages=HI,  # type: ignore[arg-type]
        )
    assert REQUEST_ID.fullmatch(denied.value.request_id or "")
    with pytest.raises(openai.BadRequestError) as bad:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages="nope")  # type: ignore[arg-type]
    assert REQUEST_ID.fullmatch(bad.value.request_id or "")


def test_the_other_endpoints_carry_it_and_count_like_chat() -> None:
    """count_tokens, embeddings and completions answer through the same request record as chat."""
    embed = {"name": "embed", "provider": "openai", "model": "text-embedding-3-small", "api_base": "embedded-sim"}
    with running_gateway(models=[*gateway_settings()["models"], embed]) as gw:
        counted = gw.anthropic().messages.with_raw_response.count_tokens(model="claude-sonnet-4-5", messages=HI)  # type: ignore[arg-type]
        assert REQUEST_ID.fullmatch(counted.headers["x-request-id"])
        embedded = gw.openai().embeddings.with_raw_response.create(model="embed", input="hi")
        assert REQUEST_ID.fullmatch(embedded.headers["x-request-id"])
        with pytest.raises(openai.NotFoundError) as missing:
            gw.openai().completions.create(model="nope-model", prompt="hi")
        assert REQUEST_ID.fullmatch(missing.value.request_id or "")
        metrics = gw.metrics()
    assert 'api="embeddings",model="embed",provider="openai",status="ok"' in metrics
    assert 'api="completions",model="unknown",provider="none",status="404"' in metrics
