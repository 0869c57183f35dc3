"""The optimizer's working copy is copied on write (issue 28): the caller's body never changes, the
messages it changes (system text, the last turn, marked blocks) are copies, the others are the caller's
own objects (a long history is not deep-copied on every request)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.prompt_cache_replay import anthropic_tools, to_anthropic
from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.prompt_cache.optimizer import optimize
from gateway.prompt_cache.session import SessionState
from gateway.traces import assistant_turns, read_sessions

TIMESTAMP = "Current time: 2026-11-27T07:10:00Z"


def request(wire: str, turns: int) -> dict[str, Any]:
    session = next(iter(read_sessions()))
    messages = session["messages"][: assistant_turns(session["messages"])[turns]]
    if wire == "openai":
        system = {"role": "system", "content": f"{messages[0]['content']}\n{TIMESTAMP}"}
        return {"model": "m", "messages": [system, *messages[1:]], "tools": session["tools"]}
    prompt, converted = to_anthropic(messages)
    return {
        "model": "m",
        "system": f"{prompt}\n{TIMESTAMP}",
        "messages": converted,
        "tools": anthropic_tools(session["tools"]),
    }


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_changes_land_on_copies_of_the_messages_they_touch(wire: str) -> None:
    route = ModelConfig(name="m", provider="anthropic", model="claude-sonnet-4-5", api_base="http://127.0.0.1:9")
    body = request(wire, 8)
    sent = orjson.dumps(body)
    outcome = optimize(body, wire, route, PromptCacheConfig(relocate_volatile=True), SessionState(), "s", 1.0)
    assert orjson.dumps(body) == sent  # the caller's body as it came
    assert outcome.relocated and outcome.placements  # the timestamp moved, marks were placed
    out = outcome.body["messages"]
    assert len(out) == len(body["messages"]) + (1 if wire == "openai" else 0)  # OpenAI: the note is a message
    marked = {i for i, m in enumerate(out) if b'"cache_control"' in orjson.dumps(m)}
    changed = {i for i, m in enumerate(body["messages"]) if orjson.dumps(m) != orjson.dumps(out[i])}
    assert marked and changed >= marked
    for index, message in enumerate(body["messages"]):
        assert (out[index] is message) == (index not in changed)
    assert sum(out[i] is m for i, m in enumerate(body["messages"])) >= len(out) - 5
