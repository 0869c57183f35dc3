"""Anthropic Messages through the official SDK and LiteLLM: wire format and cache_control caching."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import httpx
import litellm
import pytest

from gateway.sim import SimSettings, create_sim_app
from gateway.sim.settings import LatencySettings
from tests.servers import run_app_in_thread
from tests.sim.conftest import SIM_ADMIN, long_text

SONNET = "claude-sonnet-4-5"
EPHEMERAL: Any = {"type": "ephemeral"}
HOUR: Any = {"type": "ephemeral", "ttl": "1h"}
BASH: Any = {
    "name": "bash",
    "description": "Run a shell command.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def _ask(claude: anthropic.Anthropic, messages: list[Any], model: str = SONNET, **extra: Any) -> Any:
    return claude.messages.create(model=model, max_tokens=256, messages=messages, **extra)


def _system(words: int = 1500, mark: Any = EPHEMERAL) -> list[Any]:
    return [{"type": "text", "text": long_text(words), "cache_control": mark}]


def _blocks(prefix: str, count: int) -> list[Any]:
    return [{"type": "text", "text": f"{prefix} block {i}"} for i in range(count)]


def test_text_reply_and_stream_events(claude: anthropic.Anthropic) -> None:
    reply = _ask(claude, [{"role": "user", "content": "hello claude"}], system="Be brief.")
    assert reply.content[0].text == "hello claude" and reply.stop_reason == "end_turn"
    with claude.messages.stream(model=SONNET, max_tokens=64, messages=[{"role": "user", "content": "a b c d"}]) as s:
        kinds = [event.type for event in s]
        final: Any = s.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"content_block_start", "content_block_delta", "content_block_stop", "message_delta"} <= set(kinds)
    assert final.content[0].text == "a b c d" and final.usage.output_tokens > 0


def test_tool_use_round_trip_streaming(claude: anthropic.Anthropic) -> None:
    ask: Any = {"role": "user", "content": [{"type": "text", "text": '[[sim:tool bash {"command": "ls"}]]'}]}
    with claude.messages.stream(model=SONNET, max_tokens=64, messages=[ask], tools=[BASH]) as stream:
        deltas = [e.delta.type for e in stream if e.type == "content_block_delta"]
        first: Any = stream.get_final_message()
    assert "input_json_delta" in deltas
    use = first.content[-1]
    assert first.stop_reason == "tool_use" and use.name == "bash" and use.input == {"command": "ls"}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a.txt"}]}
    second = _ask(claude, [ask, {"role": "assistant", "content": first.content}, result], tools=[BASH])
    assert second.stop_reason == "end_turn" and "a.txt" in second.content[0].text


@pytest.mark.parametrize(
    ("messages", "needle"),
    [
        (
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}],
                },
                {"role": "user", "content": "never answered"},
            ],
            "without `tool_result`",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}],
                }
            ],
            "unexpected `tool_use_id`",
        ),
    ],
)
def test_invalid_tool_pairing_is_400(claude: anthropic.Anthropic, messages: list[Any], needle: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        _ask(claude, messages, tools=[BASH])
    assert needle in str(raised.value)


def test_breakpoint_writes_then_reads(claude: anthropic.Anthropic) -> None:
    messages = [{"role": "user", "content": "question"}]
    first = _ask(claude, messages, system=_system()).usage
    assert first.cache_creation_input_tokens > 1024 and first.cache_read_input_tokens == 0
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    assert 0 < first.input_tokens < 20  # only the uncached tail
    second = _ask(claude, messages, system=_system()).usage
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0 and second.input_tokens == first.input_tokens


def test_no_marks_no_caching(claude: anthropic.Anthropic) -> None:
    system = [{"type": "text", "text": long_text(1500)}]
    for _ in range(2):
        usage = _ask(claude, [{"role": "user", "content": "q"}], system=system).usage
        assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0


def test_five_breakpoints_is_400(claude: anthropic.Anthropic) -> None:
    content = [{**block, "cache_control": EPHEMERAL} for block in _blocks("m", 4)]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
        _ask(claude, [{"role": "user", "content": content}], system=_system())


def test_1h_after_5m_is_400_and_writes_split_by_ttl(claude: anthropic.Anthropic) -> None:
    late_hour = [{"role": "user", "content": [{"type": "text", "text": long_text(300, "u"), "cache_control": HOUR}]}]
    with pytest.raises(anthropic.BadRequestError, match="ttl"):
        _ask(claude, late_hour, system=_system())
    late_five = [
        {
            "role": "user",
            "content": [{"type": "text", "text": long_text(300, "u"), "cache_control": EPHEMERAL}],
        }
    ]
    usage = _ask(claude, late_five, system=_system(mark=HOUR)).usage
    assert usage.cache_creation.ephemeral_1h_input_tokens > 1024  # tools + system, up to the 1h mark
    assert 0 < usage.cache_creation.ephemeral_5m_input_tokens < 1024  # the segment after it
    assert usage.cache_creation_input_tokens == (
        usage.cache_creation.ephemeral_1h_input_tokens + usage.cache_creation.ephemeral_5m_input_tokens
    )


def test_lookback_is_20_blocks(claude: anthropic.Anthropic) -> None:
    def ask(extra: list[Any]) -> Any:
        content = [*_blocks("base", 5), *extra]
        content[-1] = {**content[-1], "cache_control": EPHEMERAL}
        return _ask(claude, [{"role": "user", "content": content}], system=[{"type": "text", "text": long_text(1500)}])

    base = ask([]).usage
    near = ask(_blocks("near", 10)).usage  # the base entry is 10 blocks back: found
    assert near.cache_read_input_tokens == base.cache_creation_input_tokens
    far = ask(_blocks("far", 25)).usage  # 25 blocks back: out of reach, a full write
    assert far.cache_read_input_tokens == 0 and far.cache_creation_input_tokens > base.cache_creation_input_tokens


def test_model_minimum_is_respected_silently(claude: anthropic.Anthropic) -> None:
    messages = [{"role": "user", "content": "q"}]
    haiku = _ask(claude, messages, model="claude-haiku-4-5", system=_system(1500)).usage  # < 4096 tokens
    assert haiku.cache_creation_input_tokens == 0 and haiku.input_tokens > 1024
    assert (
        _ask(claude, messages, model="claude-haiku-4-5", system=_system(3000)).usage.cache_creation_input_tokens > 4096
    )


def test_top_level_cache_control_marks_the_last_block(claude: anthropic.Anthropic) -> None:
    messages = [{"role": "user", "content": long_text(1500)}]
    top_level = {"cache_control": EPHEMERAL}
    assert _ask(claude, messages, extra_body=top_level).usage.cache_creation_input_tokens > 1024
    assert _ask(claude, messages, extra_body=top_level).usage.cache_read_input_tokens > 1024


def test_tool_marks_cache_tools_and_changing_tools_invalidates(claude: anthropic.Anthropic) -> None:
    tools = [{**BASH, "description": long_text(1500), "cache_control": EPHEMERAL}]
    messages = [{"role": "user", "content": "q"}]
    written = _ask(claude, messages, tools=tools).usage.cache_creation_input_tokens
    assert _ask(claude, messages, tools=tools).usage.cache_read_input_tokens == written
    changed = [{**tools[0], "name": "shell"}]
    assert _ask(claude, messages, tools=changed).usage.cache_read_input_tokens == 0


async def test_parallel_identical_requests_both_pay_the_write() -> None:
    settings = SimSettings(latency=LatencySettings(scale=1.0, base_ttft_s=0.3, per_output_token_s=0.0))
    with run_app_in_thread(create_sim_app(settings)) as url:
        client = anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0)

        async def ask() -> Any:
            reply = await client.messages.create(
                model=SONNET, max_tokens=16, system=_system(), messages=[{"role": "user", "content": "q"}]
            )
            return reply.usage

        both = await asyncio.gather(ask(), ask())
        later = await ask()
    assert all(u.cache_creation_input_tokens > 1024 and u.cache_read_input_tokens == 0 for u in both)
    assert later.cache_read_input_tokens == both[0].cache_creation_input_tokens


async def test_litellm_anthropic(sim_url: str) -> None:
    messages = [
        {
            "role": "system",
            "content": [{"type": "text", "text": long_text(1500), "cache_control": EPHEMERAL}],
        },
        {"role": "user", "content": "q"},
    ]
    calls = [
        await litellm.acompletion(model=f"anthropic/{SONNET}", api_base=sim_url, api_key="k", messages=messages)
        for _ in range(2)
    ]
    assert calls[0].usage.cache_creation_input_tokens > 1024
    assert calls[1].usage.prompt_tokens_details.cached_tokens == calls[0].usage.cache_creation_input_tokens
    recent = httpx.get(sim_url + "/sim/requests", params={"limit": 1}, headers=SIM_ADMIN).json()["requests"]
    assert recent[0]["body"]["system"][0]["cache_control"] == EPHEMERAL


def test_max_tokens_cuts_the_reply_and_count_tokens(claude: anthropic.Anthropic, sim_url: str) -> None:
    reply = claude.messages.create(
        model=SONNET, max_tokens=5, messages=[{"role": "user", "content": "[[sim:tokens 50]]"}]
    )
    assert reply.stop_reason == "max_tokens" and reply.usage.output_tokens == 5
    counted = claude.messages.count_tokens(model=SONNET, system=_system(), messages=[{"role": "user", "content": "q"}])
    usage = _ask(claude, [{"role": "user", "content": "q"}], system=_system()).usage
    assert counted.input_tokens == usage.cache_creation_input_tokens + usage.input_tokens
    with pytest.raises(anthropic.BadRequestError):
        _ask(claude, [{"role": "tool", "content": "not a role here"}])  # type: ignore[list-item,typeddict-item]
    assert httpx.get(sim_url + "/sim/stats", headers=SIM_ADMIN).json()["errors"] == {"400": 1}
