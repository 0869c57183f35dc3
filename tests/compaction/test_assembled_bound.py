"""Compaction's byte bound of a session body, assembled from its messages' facts (issue 28): exactly the
bound the body's full serialization gives, for any history shape (images, unicode, nesting, no
messages), while a request serializes only the body around its history, not the history again."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest

import gateway.compaction.bounds as bounds
from gateway.compaction.bounds import assembled_small, serialized_small
from gateway.compaction.layouts import LAYOUTS
from gateway.compaction.totals import Totals, extend
from gateway.history import memo
from gateway.pacing import finish
from tests.compaction.test_work_per_turn import history, request, stage_for

CALL = {"id": "c", "type": "function", "function": {"name": "look", "arguments": '{"a": [1, 2.5, null]}'}}
IMAGE_URL = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
BODIES: dict[str, dict[str, Any]] = {
    "empty history": {"model": "m", "messages": []},
    "one message": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "images and unicode": {
        "model": "m",
        "tools": [{"type": "function", "function": {"name": "look", "description": '"type":"image" é ✓'}}],
        "messages": [
            {"role": "system", "content": "Antworte kurz. 你好"},
            {"role": "user", "content": [{"type": "text", "text": "what is it?"}, IMAGE_URL, IMAGE_URL]},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c", "content": "a cat\n" * 50},
        ],
        "temperature": 0.2,
    },
    "history first": {"messages": [{"role": "user", "content": "x" * 300}], "model": "m", "max_tokens": 7},
}


def totals_of(body: dict[str, Any]) -> Totals:
    messages = body["messages"]
    facts = [memo.facts(orjson.dumps(m)) for m in messages]
    return finish(extend(Totals("openai", "o200k_base"), LAYOUTS["openai"], messages, facts, 0))


@pytest.mark.parametrize("name", list(BODIES))
def test_the_assembled_bound_is_the_serialized_one(name: str) -> None:
    body = BODIES[name]
    exact = len(orjson.dumps(body)) + 4 * len(body["messages"]) + 1000 * orjson.dumps(body).count(b'"type":"image')
    for limit in (exact - 1, exact, exact + 1):  # the same answer on both sides of the bound
        assert assembled_small(body, "messages", totals_of(body), limit) == serialized_small(
            body, len(body["messages"]), limit
        ), limit


def test_an_uncounted_turn_serializes_only_the_body_around_its_history(monkeypatch: pytest.MonkeyPatch) -> None:
    services, stage, policy = stage_for("uncounted")
    tag = uuid.uuid4().hex
    # ~12 KB of history: under the byte check, which the body's bytes then answer.
    full = [{"role": "user", "content": f"Fix the bug. [{tag}]"}, *history(100, tag, 0)[1:]]
    for turn in range(2, 99, 2):
        asyncio.run(request(services, stage, policy, full[:turn]))
    serialized: list[int] = []

    def dumps(value: Any, *args: Any, **kwargs: Any) -> bytes:
        data = orjson.dumps(value, *args, **kwargs)
        serialized.append(len(data))
        return data

    monkeypatch.setattr(bounds, "orjson", type("Json", (), {"dumps": staticmethod(dumps)}))
    asyncio.run(request(services, stage, policy, full))
    assert serialized and max(serialized) < 100, serialized  # {"model":"m","messages":[]}, not 12 KB
