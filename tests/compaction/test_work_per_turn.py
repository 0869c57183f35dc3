"""Compaction's work on a session request follows its new turn, not its history (issue 28): the request
that adds 2 messages runs the same lines of compaction code after 20 messages as after 100, whether its
tokens stay uncounted (their bound is under every threshold) or its new turn must be counted; and only
the new turn's messages are encoded. Operations are counted, never time."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
import pytest

import gateway.compaction
import gateway.stages.compaction
from gateway.compaction import totals as totals_module
from gateway.compaction.tokens import TokenCounter, counter_for
from gateway.config import PolicyConfig, Settings, TenantConfig
from gateway.config.compaction import CompactionConfig
from gateway.context import RequestContext
from gateway.history.view import RawHistory
from gateway.services import Services, create_services
from gateway.stages.compaction import CompactionStage
from gateway.wire import OPENAI

Message = dict[str, Any]
COMPACTION = Path(gateway.compaction.__file__).parent
STAGE = gateway.stages.compaction.__file__
WINDOW = 1_000_000
# Runs of spaces: many bytes, few tokens (~100 bytes a token). Uncounted: the task's 30 KB put a 20-message
# history over 31,000 bytes (not surely small), a 100-message one stays far under the trigger, and no
# message reaches 31,000 bytes (nothing to shrink). Counted: each tool result's 25 KB put every new turn's
# bound over the trigger, while a 100-message history counts far under it.
UNCOUNTED = {"compact_trigger": 100_000, "compact_target": 50_000, "shrink_tool_result_at": 31_000}
COUNTED = {"compact_trigger": 20_000, "compact_target": 10_000, "shrink_tool_result_at": 10**6}
PADS = {"uncounted": 0, "counted": 25_000}


def history(messages: int, tag: str, pad: int) -> list[Message]:
    """A task with a large head, then tool turns (each content unique to `tag`: facts are per process)."""
    found: list[Message] = [{"role": "user", "content": f"Fix the bug. [{tag}]" + " " * 30_000}]
    step = 0
    while len(found) < messages:
        call = {"id": f"c{step}", "type": "function", "function": {"name": "bash", "arguments": f'{{"n": {step}}}'}}
        found.append({"role": "assistant", "content": f"Step {step} [{tag}]", "tool_calls": [call]})
        found.append(
            {"role": "tool", "tool_call_id": f"c{step}", "content": f"output {step} of {tag}\n" * 3 + " " * pad}
        )
        step += 1
    return found[:messages]


def context(
    services: Services, policy: PolicyConfig, messages: list[Message], session: str, tools: list[Any] | None = None
) -> RequestContext:
    """A request of the session, as the parse stage leaves it (its raw history known)."""
    raw = orjson.dumps({"model": "m", "messages": messages, **({"tools": tools} if tools else {})})
    body = orjson.loads(raw)
    return RequestContext(
        wire=OPENAI,
        body=body,
        headers={},
        services=services,
        tenant=TenantConfig(name="acme"),
        session_id=session,
        route=services.settings.models[0],
        policy=policy,
        raw_history=RawHistory.of(raw, body, "messages"),
    )


async def request(
    services: Services,
    stage: CompactionStage,
    policy: PolicyConfig,
    messages: list[Message],
    session: str = "",
    tools: list[Any] | None = None,
) -> Any:
    ctx = context(services, policy, messages, session or str(messages[0]["content"])[:40], tools)
    await stage.on_request(ctx)
    await ctx.state.flush()
    return ctx.response_headers


def traced(run: Callable[[], Any]) -> tuple[Any, Counter[str]]:
    """`run()`'s result, and the lines it ran in compaction's code (calls into the token counter's
    encoding included, as `encode`)."""
    lines: Counter[str] = Counter()

    def local(frame: FrameType, event: str, _: object) -> Any:
        if event == "line":
            lines[f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"] += 1
        return local

    def calls(frame: FrameType, event: str, _: object) -> Any:
        name = frame.f_code.co_filename
        if frame.f_code is totals_module._index.__code__:  # a bisection's key: O(log n) calls, not counted
            return None
        if event == "call" and (name.startswith(str(COMPACTION)) or name == STAGE):
            if frame.f_code is TokenCounter._message_now.__code__:
                lines["encode"] += 1
            elif frame.f_code is TokenCounter._json_now.__code__:
                lines["encode json"] += 1
            return local
        return None

    sys.settrace(calls)
    try:
        result = run()
    finally:
        sys.settrace(None)
    return result, lines


def stage_for(case: str) -> tuple[Services, CompactionStage, PolicyConfig]:
    return stage_with(COUNTED if case == "counted" else UNCOUNTED)


def stage_with(thresholds: dict[str, int]) -> tuple[Services, CompactionStage, PolicyConfig]:
    """The compaction stage of a gpt-4o-mini route with a WINDOW-token window, under these thresholds."""
    model = {
        "name": "m",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_base": "http://x",
        "context_window": WINDOW,
    }
    services = create_services(Settings.model_validate({"models": [model]}))
    policy = PolicyConfig(compaction=CompactionConfig.model_validate(thresholds))
    return services, CompactionStage(services), policy


def work(messages: int, case: str) -> tuple[Any, Counter[str]]:
    """The compaction lines run by the request that adds 2 messages to a session of `messages - 2`,
    after that session's earlier turns went through the stage."""
    services, stage, policy = stage_for(case)
    full = history(messages, uuid.uuid4().hex, PADS[case])
    for turn in range(2, messages - 1, 2):
        asyncio.run(request(services, stage, policy, full[:turn]))
    return traced(lambda: asyncio.run(request(services, stage, policy, full)))


@pytest.mark.parametrize("case", ["uncounted", "counted"])
def test_a_turn_costs_the_same_after_20_messages_and_after_100(case: str) -> None:
    (short_headers, short), (long_headers, long) = work(20, case), work(100, case)
    counted = case == "counted"
    for headers in (short_headers, long_headers):  # both in the regime the case is about
        assert headers["x-cachegate-compaction"] == "none"
        assert ("x-cachegate-compaction-tokens-before" in headers) == counted
    assert long["encode"] == (2 if counted else 0)  # only the new turn is counted, if at all
    assert short == long, {line: (short[line], long[line]) for line in short | long if short[line] != long[line]}


def exact_tokens(messages: list[Message]) -> int:
    counter = counter_for("openai", "gpt-4o-mini")
    return counter.json([]) + counter.content(None) + sum(counter.message(m) for m in messages)


def test_bounds_counted_since_by_another_session_count_as_the_walk_would_see_them() -> None:
    """A session's totals took its messages' bounds; another session with the same messages counted them.
    A retry of the first session's request then has every count known, as a walk over the facts shows:
    reported as counted, with the exact tokens (the totals do not keep the stale bounds)."""
    full = history(20, uuid.uuid4().hex, 0)
    services, stage, policy = stage_for("uncounted")
    for turn in range(2, 21, 2):
        headers = asyncio.run(request(services, stage, policy, full[:turn]))
    assert "x-cachegate-compaction-tokens-before" not in headers  # bounds only
    other, other_stage, counting = stage_for("counted")
    asyncio.run(request(other, other_stage, counting, full, session="another"))
    again = asyncio.run(request(services, stage, policy, full))
    assert again["x-cachegate-compaction"] == "none"
    assert int(again["x-cachegate-compaction-tokens-before"]) == exact_tokens(full)


def test_an_edited_history_is_summed_again() -> None:
    """A request that does not repeat the session's previous history (an edited message) gets its sums
    from its own messages: its exact count, not the previous history's."""
    tag = uuid.uuid4().hex
    full = history(20, tag, PADS["counted"])
    services, stage, policy = stage_for("counted")
    for turn in range(2, 21, 2):
        asyncio.run(request(services, stage, policy, full[:turn]))
    edited = [*full[:2], {**full[2], "content": f"edited [{tag}]" + " " * PADS["counted"]}, *full[3:]]
    headers = asyncio.run(request(services, stage, policy, edited))
    assert int(headers["x-cachegate-compaction-tokens-before"]) == exact_tokens(edited)
    shorter = asyncio.run(request(services, stage, policy, full[:10]))  # a client that went back
    assert int(shorter["x-cachegate-compaction-tokens-before"]) == exact_tokens(full[:10])


def test_the_tools_are_counted_once_a_session() -> None:
    """An agent's tools (an agent CLI's are tens of kilobytes) come back unchanged on every request: encoded
    on the first, then taken from the tools' facts (tests/history/test_part_facts.py: found with no
    serialization); the count is the one the tools' JSON gives."""
    services, stage, policy = stage_for("counted")
    tag = uuid.uuid4().hex
    tools = [
        {"type": "function", "function": {"name": f"tool{n}", "description": f"{tag} " + "Does things. " * 200}}
        for n in range(8)
    ]
    full, session = history(12, tag, PADS["counted"]), f"tools-{tag}"
    for turn in range(2, 11, 2):
        asyncio.run(request(services, stage, policy, full[:turn], session, tools))
    headers, lines = traced(lambda: asyncio.run(request(services, stage, policy, full, session, tools)))
    assert lines["encode json"] == 0 and lines["encode"] == 2  # the new turn only
    counter = counter_for("openai", "gpt-4o-mini")
    exact = counter.json(tools) + sum(counter.message(m) for m in full)
    assert int(headers["x-cachegate-compaction-tokens-before"]) == exact


# A session compacted once, early: its first tool results are large (~2,000 tokens each), the later ones
# small, so after the compaction every request re-applies the recorded references and stays under the trigger.
COMPACTED = {
    "compact_trigger": 10_000,
    "compact_target": 5_000,
    "clear_at_least": 1_000,
    "keep_tool_results": 2,
    "min_tool_result_tokens": 100,
    "shrink_tool_result_at": 10**6,
}


def compacted_history(messages: int, tag: str) -> list[Message]:
    found: list[Message] = [{"role": "user", "content": f"Fix the bug. [{tag}]"}]
    step = 0
    while len(found) < messages:
        call = {"id": f"c{step}", "type": "function", "function": {"name": "bash", "arguments": f'{{"n": {step}}}'}}
        output = f"output {step} of {tag}\n" + ("alpha beta " * 1_000 if step < 6 else "done")
        found += [
            {"role": "assistant", "content": f"Step {step} [{tag}]", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{step}", "content": output},
        ]
        step += 1
    return found[:messages]


def compacted_work(messages: int) -> tuple[list[Any], Counter[str]]:
    """The compaction lines run by the request that adds 2 messages to the compacted session of
    `messages - 2` (and each request's headers)."""
    services, stage, policy = stage_with(COMPACTED)
    # Digits: every tag counts the same tokens (a hex tag's count varies, and with it when compaction acts).
    full, seen = compacted_history(messages, f"{uuid.uuid4().int % 10**30:030d}"), []
    for turn in range(3, messages - 1, 2):
        seen.append(asyncio.run(request(services, stage, policy, full[:turn])))
    last, lines = traced(lambda: asyncio.run(request(services, stage, policy, full)))
    return [*seen, last], lines


def test_a_compacted_session_s_turn_costs_the_same_after_40_messages_and_after_100() -> None:
    """The recorded compactions are made again from what the session's previous request replaced: a turn
    looks at its new results only (it re-applied every recorded one, deciding each again)."""
    (short_headers, short), (long_headers, long) = compacted_work(41), compacted_work(101)
    for headers in (short_headers, long_headers):
        actions = [h["x-cachegate-compaction"] for h in headers]
        assert "compacted" in actions and actions[-1] == "reapplied", actions
        assert actions[actions.index("compacted") + 1 :] == ["reapplied"] * (
            len(actions) - actions.index("compacted") - 1
        )
    assert short == long, {line: (short[line], long[line]) for line in short | long if short[line] != long[line]}
