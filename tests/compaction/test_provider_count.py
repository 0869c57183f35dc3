"""The provider's count of a session's last turn bounds its next one (gateway/compaction/provider_count.py,
issue 28): a history past the trigger's byte bound is not counted while that count, with the bounds of
what came since, is well under the trigger; near it, or without a count the provider gave for the very
history and tools, the engine counts exactly and decides as before. Encodings are counted, never time."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from gateway.compaction.provider_count import PROVIDER_SHARE, ProviderCount, plausible, shows_under
from gateway.compaction.tokens import TokenCounter
from gateway.config import PolicyConfig
from gateway.context import Reply
from gateway.governance.estimate import CUT_SHORT
from gateway.services import Services
from gateway.stages.compaction import CompactionStage
from tests.compaction.test_work_per_turn import COUNTED, Message, context, history, stage_for

TRIGGER = COUNTED["compact_trigger"]
TOOL = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}


def test_the_bound_is_the_count_plus_what_came_since() -> None:
    seen = ProviderCount(messages=3, fixed=10, tokens=1000)
    limit, counts = 10_000, [400, 300, 300, 2000, 4000]
    assert shows_under(seen, counts, 10, limit)  # 1000 + 6000 <= 8000
    assert not shows_under(seen, [*counts, 1001], 10, limit)  # 8001
    assert not shows_under(seen, counts, 11, limit)  # tools or system prompt changed
    assert not shows_under(seen, counts[:2], 10, limit)  # a history shorter than the one counted
    assert not shows_under(None, counts, 10, limit)
    assert plausible(1000, 16_000) and not plausible(1000, 16_001)


class Encodings:
    """Texts the token counter's encoding is asked to encode (the library's call, passed through)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = TokenCounter.text

        def text(counter: TokenCounter, value: str) -> int:
            self.count += 1
            return original(counter, value)

        monkeypatch.setattr(TokenCounter, "text", text)


async def turn(
    services: Services,
    stage: CompactionStage,
    policy: PolicyConfig,
    messages: list[Message],
    session: str,
    *,
    tools: list[Any] | None = None,
    answer: dict[str, Any] | None = None,
    source: str = "upstream",
    cut_short: bool = False,
) -> dict[str, str]:
    """One request through the stage, then its end as the proxy ends it (finishers run) after the
    provider answered `answer` (its usage: the provider's count)."""
    ctx = context(services, policy, messages, session, tools)
    await stage.on_request(ctx)
    await ctx.state.flush()
    ctx.reply = Reply(body=answer, source=source)
    ctx.response_body = answer
    if cut_short:
        ctx.notes[CUT_SHORT] = True
    for finish in ctx.finishers:
        await finish()
    return ctx.response_headers


def plausibly(messages: list[Message]) -> int:
    """A provider's count of these messages: a token per 8 of their bytes."""
    return len(orjson.dumps(messages)) // 8


def answered(prompt_tokens: int | None) -> dict[str, Any]:
    message = {"role": "assistant", "content": "ok"}
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 1} if prompt_tokens is not None else None
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message}], "usage": usage}


PAD = 2_000  # a tool result's bytes: many turns before the history's byte bound passes the trigger again
TURNS = 30  # ~60 KB: its byte bound 3x the trigger, a provider's count of a token per 8 bytes well under it


def replay(
    provider: int | Callable[[list[Message]], int] | None, monkeypatch: pytest.MonkeyPatch, **end: Any
) -> list[tuple[dict[str, str], int]]:
    """A session of tool turns, its history's bytes over the trigger's byte bound from some turn on and its
    tokens far under the trigger (COUNTED, runs of spaces), the provider reporting `provider` input tokens
    for each request (or those it gives the request's messages): each request's headers and the texts
    encoded for it."""
    services, stage, policy = stage_for("counted")
    full, session = history(TURNS, uuid.uuid4().hex, PAD), uuid.uuid4().hex
    encodings, found = Encodings(monkeypatch), []
    for k in range(2, TURNS + 1, 2):
        before, count = encodings.count, provider(full[:k]) if callable(provider) else provider
        headers = asyncio.run(turn(services, stage, policy, full[:k], session, answer=answered(count), **end))
        found.append((headers, encodings.count - before))
    monkeypatch.undo()
    return found


def test_a_history_the_provider_counted_well_under_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = replay(None, monkeypatch)
    assert sum(encoded for _, encoded in counted[1:]) > 0  # without a count, the history is counted...
    with_count = replay(plausibly, monkeypatch)
    assert sum(encoded for _, encoded in with_count[1:]) == 0  # ...with one, after the first turn, never
    for (exact, _), (bounded, _) in zip(counted, with_count, strict=True):
        assert exact["x-cachegate-compaction"] == bounded["x-cachegate-compaction"] == "none"
    assert "x-cachegate-compaction-tokens-before" not in with_count[-1][0]  # not counted: nothing reported


@pytest.mark.parametrize(
    ("provider", "end"),
    [
        (None, {}),  # the provider sent no count
        (5, {}),  # a count no history of these bytes has
        (plausibly, {"source": "response_cache"}),  # not the provider's answer
        (plausibly, {"cut_short": True}),  # a stream cut short: a partial count
    ],
    ids=["no usage", "implausible count", "cached answer", "cut short"],
)
def test_without_the_providers_own_count_the_history_is_counted(
    monkeypatch: pytest.MonkeyPatch, provider: Any, end: dict[str, Any]
) -> None:
    found = replay(provider, monkeypatch, **end)
    assert sum(encoded for _, encoded in found[1:]) > 0


def test_a_count_near_the_trigger_is_counted_and_decides_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    found = replay(int(PROVIDER_SHARE * TRIGGER), monkeypatch)
    assert sum(encoded for _, encoded in found[1:]) > 0
    assert all(headers["x-cachegate-compaction"] == "none" for headers, _ in found)


def test_a_count_of_other_tools_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    services, stage, policy = stage_for("counted")
    full, session = history(TURNS, uuid.uuid4().hex, PAD), uuid.uuid4().hex
    for k in range(2, TURNS - 1, 2):
        asyncio.run(turn(services, stage, policy, full[:k], session, answer=answered(plausibly(full[:k]))))
    encodings = Encodings(monkeypatch)
    headers = asyncio.run(turn(services, stage, policy, full, session, tools=[TOOL]))
    assert encodings.count > 0
    assert "x-cachegate-compaction-tokens-before" in headers


def test_a_new_turn_whose_bytes_pass_the_share_is_counted_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider's count just under the share, a new turn whose bytes would take it over and whose
    tokens do not (runs of spaces): the new turn's 2 messages are encoded, never the history."""
    found = replay(int(PROVIDER_SHARE * TRIGGER) - 500, monkeypatch)
    encoded = [count for _, count in found[1:]]
    assert 2 in encoded and set(encoded) <= {0, 2}, encoded  # 0: its bound is still under the trigger
    assert all(headers["x-cachegate-compaction"] == "none" for headers, _ in found)
