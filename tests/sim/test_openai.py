"""OpenAI Chat Completions through the official SDK and LiteLLM: wire format and prompt caching."""

from __future__ import annotations

import json
from typing import Any

import httpx
import litellm
import openai
import pytest

from tests.sim.conftest import SIM_ADMIN, long_text

BASH_TOOL: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


def _ask(oai: openai.OpenAI, messages: list[Any], **extra: Any) -> Any:
    return oai.chat.completions.create(model="gpt-4o-mini", messages=messages, **extra)


def test_echo_and_usage(oai: openai.OpenAI) -> None:
    reply = _ask(oai, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello sim"}])
    assert reply.choices[0].message.content == "hello sim"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
    assert reply.usage.prompt_tokens_details is not None
    assert reply.usage.prompt_tokens_details.cached_tokens == 0


def test_streaming_text_and_usage(oai: openai.OpenAI) -> None:
    stream = _ask(
        oai,
        [{"role": "user", "content": "[[sim:chant 4]]"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.count("I will run the same command again") == 4
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_tool_call_directive_then_text_after_tool_result(oai: openai.OpenAI) -> None:
    ask = {"role": "user", "content": 'please [[sim:tool bash {"command": "ls -la"}]]'}
    first = _ask(oai, [ask], tools=BASH_TOOL)
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "bash" and json.loads(call.function.arguments) == {"command": "ls -la"}
    history = [ask, first.choices[0].message.model_dump(exclude_none=True)]
    history.append({"role": "tool", "tool_call_id": call.id, "content": "file.txt"})
    second = _ask(oai, history, tools=BASH_TOOL)
    assert second.choices[0].message.tool_calls is None
    assert "file.txt" in second.choices[0].message.content


def test_loop_directive_repeats_the_call_after_every_result(oai: openai.OpenAI) -> None:
    """An agent stuck in a loop: the same call comes back after each tool result, while the user message
    holding the directive stays in the history (a plain `tool` directive answers text after one result)."""
    history: list[dict[str, Any]] = [{"role": "user", "content": 'fix it [[sim:loop bash {"command": "make"}]]'}]
    for turn in range(3):
        reply = _ask(oai, history, tools=BASH_TOOL).choices[0]
        assert reply.finish_reason == "tool_calls", turn
        call = reply.message.tool_calls[0]
        assert call.function.name == "bash" and json.loads(call.function.arguments) == {"command": "make"}
        history += [
            reply.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "error"},
        ]
    history.append({"role": "user", "content": "[[sim:text stopped]]"})  # a newer directive wins
    assert _ask(oai, history, tools=BASH_TOOL).choices[0].message.content == "stopped"


def test_streamed_tool_call(oai: openai.OpenAI) -> None:
    stream = _ask(
        oai,
        [{"role": "user", "content": '[[sim:tool bash {"command": "pwd"}]]'}],
        tools=BASH_TOOL,
        stream=True,
    )
    deltas = [c.choices[0].delta for c in stream if c.choices and c.choices[0].delta.tool_calls]
    arguments = "".join(d.tool_calls[0].function.arguments or "" for d in deltas)
    assert deltas[0].tool_calls[0].function.name == "bash"
    assert json.loads(arguments) == {"command": "pwd"}


@pytest.mark.parametrize(
    "messages",
    [
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "user", "content": "no tool answer"},
        ],
        [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nope", "content": "x"}],
    ],
)
def test_invalid_tool_pairing_is_400(oai: openai.OpenAI, messages: list[Any]) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _ask(oai, messages, tools=BASH_TOOL)
    assert "tool" in raised.value.message


def _cached(oai: openai.OpenAI, messages: list[Any], **extra: Any) -> tuple[int, int]:
    usage = _ask(oai, messages, **extra).usage
    return usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens


def test_no_caching_below_1024_tokens(oai: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": long_text(300)}]
    assert _cached(oai, messages)[1] == 0
    prompt, cached = _cached(oai, messages)
    assert prompt < 1024 and cached == 0


def test_cache_hits_in_128_token_steps_and_prefix_change_breaks(oai: openai.OpenAI) -> None:
    system = {"role": "system", "content": long_text(1500)}
    first = [system, {"role": "user", "content": "question one"}]
    prompt, cached = _cached(oai, first)
    assert cached == 0
    prompt, cached = _cached(oai, first)  # identical prompt: everything up to the last 128-step
    assert cached >= 1024 and cached % 128 == 0 and 0 <= prompt - cached < 128
    longer = [
        *first,
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": long_text(400, "x")},
    ]
    prompt2, cached2 = _cached(oai, longer)
    assert cached2 == cached  # the shared prefix, not the new turn
    assert prompt2 > prompt
    changed = [{"role": "system", "content": "CHANGED " + long_text(1500)}, *first[1:]]
    assert _cached(oai, changed)[1] == 0


def test_cache_is_per_key_and_model(oai: openai.OpenAI, sim_url: str) -> None:
    messages: Any = [{"role": "user", "content": long_text(1500)}]
    _cached(oai, messages)
    other_key = openai.OpenAI(base_url=sim_url + "/v1", api_key="sk-other", max_retries=0)
    assert _cached(other_key, messages)[1] == 0
    other_model: Any = oai.chat.completions.create(model="gpt-4o", messages=messages)
    assert other_model.usage.prompt_tokens_details.cached_tokens == 0
    assert _cached(oai, messages, extra_body={"prompt_cache_key": "s1", "prompt_cache_retention": "24h"})[1] > 0


async def test_litellm_openai(sim_url: str) -> None:
    messages = [{"role": "user", "content": long_text(1500)}]
    responses = [
        await litellm.acompletion(model="openai/gpt-4o-mini", api_base=sim_url + "/v1", api_key="k", messages=messages)
        for _ in range(2)
    ]
    assert responses[1].usage.prompt_tokens_details.cached_tokens >= 1024
    stream = await litellm.acompletion(
        model="openai/gpt-4o-mini",
        api_base=sim_url + "/v1",
        api_key="k",
        messages=[{"role": "user", "content": "[[sim:text streamed ok]]"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
    assert text == "streamed ok"
    stats = httpx.get(sim_url + "/sim/stats", headers=SIM_ADMIN).json()
    assert stats["models"]["gpt-4o-mini"]["requests"] == 3
    assert stats["models"]["gpt-4o-mini"]["cache_read_tokens"] >= 1024


def test_tool_choice_forces_a_call_and_max_tokens_cuts(oai: openai.OpenAI) -> None:
    forced = _ask(oai, [{"role": "user", "content": "anything"}], tools=BASH_TOOL, tool_choice="required")
    assert forced.choices[0].message.tool_calls[0].function.name == "bash"
    cut = _ask(oai, [{"role": "user", "content": "[[sim:tokens 40]]"}], max_completion_tokens=7)
    assert cut.choices[0].finish_reason == "length" and cut.usage.completion_tokens == 7


def test_disconnect_without_streaming(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.APIConnectionError):
        _ask(oai, [{"role": "user", "content": "[[sim:fault disconnect]]"}])
