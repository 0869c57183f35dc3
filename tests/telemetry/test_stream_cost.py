"""A stream's cost where a client can read it: in its final usage event, under `usage.cachegate`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway

FIELDS = {"cost_usd", "saved_usd", "cache_read_tokens", "cache_write_tokens"}


@pytest.fixture(scope="module", params=["lean", "litellm"])
def paths(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    with running_gateway(**gateway_settings(path=request.param, policy=CORE_POLICY)) as gw:
        yield gw


def _check(extra: dict[str, Any] | None) -> dict[str, Any]:
    assert extra is not None and set(extra["cachegate"]) == FIELDS, extra
    fields: dict[str, Any] = extra["cachegate"]
    assert fields["cost_usd"] > 0 and isinstance(fields["cache_read_tokens"], int)
    return fields


def test_openai_final_usage_chunk(paths: RunningGateway) -> None:
    chunks = list(
        paths.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "[[sim:text streamed cost]]"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "streamed cost"
    last = chunks[-1]
    assert last.usage is not None and last.usage.completion_tokens > 0
    _check(last.usage.model_extra)
    assert all(c.usage is None for c in chunks[:-1])


def test_openai_without_include_usage(paths: RunningGateway) -> None:
    """No usage chunk is added for a client that did not ask for one; where the upstream path sends one
    anyway (LiteLLM's), it carries the fields too."""
    chunks = list(
        paths.openai().chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "[[sim:text plain]]"}], stream=True
        )
    )
    with_usage = [c for c in chunks if c.usage is not None]
    assert len(with_usage) <= 1 and chunks[0].choices[0].delta.content is not None
    if paths.services.settings.models[0].path == "lean":
        assert with_usage == []
    for chunk in with_usage:
        _check(chunk.usage.model_extra)  # type: ignore[union-attr]


def test_anthropic_message_delta(paths: RunningGateway) -> None:
    client = paths.anthropic()
    messages = [{"role": "user", "content": "[[sim:text streamed cost]]"}]
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=32, messages=messages) as stream:  # type: ignore[arg-type]
        deltas = [event for event in stream if event.type == "message_delta"]
        final = stream.get_final_message()
    assert final.content[0].text == "streamed cost"  # type: ignore[union-attr]
    assert len(deltas) == 1
    fields = _check(deltas[0].usage.model_extra)
    assert fields["cache_read_tokens"] == (final.usage.cache_read_input_tokens or 0)


def test_responses_completed_event(paths: RunningGateway) -> None:
    """Responses API (Codex, the Agents SDK): the cost rides in `response.completed`'s usage."""
    events = list(
        paths.openai().responses.create(model="gpt-4o-mini", input="[[sim:text responses cost]]", stream=True)
    )
    final = events[-1]
    assert final.type == "response.completed" and final.response.output_text == "responses cost"
    assert final.response.usage is not None and final.response.usage.output_tokens > 0
    _check(final.response.usage.model_extra)


def test_replayed_stream_carries_it_too() -> None:
    """A stream the gateway replays from a complete response (the response cache's hits) gets the fields
    in its usage chunk as well (cost 0, saved > 0 on a hit)."""
    with running_gateway(**gateway_settings(path="lean")) as gw:  # the default policy: response cache on
        ask = {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "[[sim:text cached stream]]"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        list(gw.openai().chat.completions.create(**ask))
        chunks = list(gw.openai().chat.completions.create(**ask))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "cached stream"
    assert chunks[-1].usage is not None
    fields = chunks[-1].usage.model_extra["cachegate"]  # type: ignore[index]
    assert fields["cost_usd"] == 0 and fields["saved_usd"] > 0


def test_only_the_contentless_usage_chunk_is_held() -> None:
    """A provider that sends usage on content chunks too: those pass at once (the stream is never held)."""
    from gateway.wire import ANTHROPIC, OPENAI
    from gateway.wire.sse import encode, parse_event

    usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    content = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}], "usage": usage}
    final = {"choices": [], "usage": usage}
    assert not OPENAI.is_final_usage(parse_event(encode(content)))
    assert OPENAI.is_final_usage(parse_event(encode(final)))
    assert not OPENAI.is_final_usage(parse_event(encode({"choices": [], "usage": None})))
    rewritten = parse_event(OPENAI.with_usage_extra(parse_event(encode(final)), {"cost_usd": 0.5})).json()
    assert rewritten["usage"] == {**usage, "cachegate": {"cost_usd": 0.5}}
    delta = encode({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 2}}, "message_delta")
    assert ANTHROPIC.is_final_usage(parse_event(delta))
    assert parse_event(ANTHROPIC.with_usage_extra(parse_event(delta), {"cost_usd": 1})).event == "message_delta"
