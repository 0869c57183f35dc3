"""Replay of a recorded agent session (OpenAI SDK as recorded; LiteLLM->Anthropic after gateway edits)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import litellm
import openai
import pytest

from gateway.sim import SimSettings, create_sim_app
from gateway.traces import default_traces, read_sessions
from tests.servers import run_app_in_thread

TRACES = default_traces()


def _session(number: int) -> dict[str, Any]:
    for index, session in enumerate(read_sessions(TRACES)):
        if index == number:
            return session
    raise IndexError(number)


@pytest.fixture(scope="module")
def replay_url() -> Iterator[str]:
    with run_app_in_thread(create_sim_app(SimSettings(replay_file=TRACES))) as url:
        yield url


def _steps(messages: list[Any]) -> list[int]:
    return [k for k, message in enumerate(messages) if message["role"] == "assistant"]


def _calls(message: Any) -> list[tuple[str, str]]:
    return [(call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls") or []]


def test_openai_replay_of_a_whole_session(replay_url: str) -> None:
    session = _session(0)
    messages = session["messages"]
    client = openai.OpenAI(base_url=replay_url + "/v1", api_key="k", max_retries=0)
    cached_total = 0
    for k in _steps(messages):
        reply: Any = client.chat.completions.create(model="gpt-4o-mini", messages=messages[:k], tools=session["tools"])
        answer = reply.choices[0].message.model_dump(exclude_none=True)
        assert (answer.get("content") or "") == (messages[k].get("content") or ""), k
        assert _calls(answer) == _calls(messages[k]), k
        cached_total += reply.usage.prompt_tokens_details.cached_tokens
    assert cached_total > 0  # a growing agent history is served from the prefix cache


async def test_anthropic_replay_survives_marks_compaction_and_nudge(replay_url: str) -> None:
    session = _session(1)
    messages = session["messages"]
    for k in _steps(messages)[3:8]:
        sent = json.loads(json.dumps(messages[:k]))
        sent[0]["content"] = [{"type": "text", "text": sent[0]["content"], "cache_control": {"type": "ephemeral"}}]
        for older in sent[2 : k - 4]:  # compaction rewrites older history
            if older["role"] == "tool":
                older["content"] = "[output compacted]"
        sent.append({"role": "user", "content": "Reminder: keep going with one command at a time."})
        reply = await litellm.acompletion(
            model="anthropic/claude-sonnet-4-5",
            api_base=replay_url,
            api_key="k",
            messages=sent,
            tools=session["tools"],
        )
        answer = reply.choices[0].message
        recorded = messages[k]
        got = [(call.function.name, json.loads(call.function.arguments)) for call in answer.tool_calls or []]
        assert got == [(name, json.loads(args)) for name, args in _calls(recorded)], k
        assert (answer.content or "").strip() == (recorded.get("content") or "").strip(), k
