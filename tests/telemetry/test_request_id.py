"""x-request-id on every answer (streamed, errors, auth failures), readable through the SDKs."""

from __future__ import annotations

import re

import anthropic
import openai
import pytest

from tests.gateway_harness import RunningGateway

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
