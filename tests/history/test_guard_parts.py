"""The loop guard's per-message parts (issue 28): taken once per message content, kept with the message's
facts, and a session's parser fed only what each request adds, on recorded agent sessions."""

from __future__ import annotations

import orjson

from agent_runtime.guard import message_parts, steps_from_anthropic_messages, steps_from_openai_messages
from bench.prompt_cache_replay import to_anthropic
from gateway.guard.parsers import SessionParsers, history_tool_calls
from gateway.history import HistoryView
from gateway.history.facts import FactMemo
from gateway.history.steps import parts_of
from gateway.traces import assistant_turns, read_sessions

KEEP = 52  # the default policy's: 2 * lookback_steps + 4


def test_session_parsers_give_every_request_the_steps_and_tool_calls_of_a_full_parse() -> None:
    session = next(iter(read_sessions()))
    openai = session["messages"]
    anthropic = to_anthropic(openai)[1]
    memo = FactMemo()
    for fmt, messages, full in (
        ("openai", openai, steps_from_openai_messages),
        ("anthropic", anthropic, steps_from_anthropic_messages),
    ):
        parsers = SessionParsers(10)
        for k in assistant_turns(messages):
            request = orjson.loads(orjson.dumps(messages[:k]))  # fresh objects, as the gateway parses them
            steps, tool_calls = parsers.steps(f"t:{fmt}", fmt, request, KEEP, HistoryView(memo))
            assert steps == full(request) and tool_calls == history_tool_calls(fmt, request)
        assert parsers.bytes == len(orjson.dumps(request)) - len(request) - 1  # the fed messages' JSON


def test_parts_are_shared_by_content_across_requests_and_formats_are_kept_apart() -> None:
    session = next(iter(read_sessions()))
    messages = session["messages"][: assistant_turns(session["messages"])[5]]
    memo = FactMemo()
    first, copy = parts_of(HistoryView(memo), "openai"), parts_of(HistoryView(memo), "openai")
    for message, same in zip(messages, orjson.loads(orjson.dumps(messages)), strict=True):
        assert first(message) is copy(same) == message_parts("openai", message)  # taken once per content
        assert memo.facts(orjson.dumps(message)).guard == ("openai", first(message))
    tool_result = next(m for m in messages if m["role"] == "tool")
    assert parts_of(HistoryView(memo), "anthropic")(tool_result) == message_parts("anthropic", tool_result)
