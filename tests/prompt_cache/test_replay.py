"""Recorded agent sessions replayed through the gateway: the hit ratio stays at the physical limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.prompt_cache_replay import Replay, Summary, load_sessions, physical_limit, replay_gateway, replay_session
from gateway.usage import price_for

GOAL = 0.95  # of the physical limit
PRICES = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4.1-mini"}


@pytest.fixture(scope="module")
def replay() -> Iterator[Replay]:
    with replay_gateway() as running:
        yield running


@pytest.mark.parametrize("mode", ["anthropic", "openai"])
def test_replayed_sessions_reach_the_goal(replay: Replay, mode: str) -> None:
    sessions = sorted(load_sessions(), key=lambda s: len(s["messages"]))[:3]  # the three shortest (~35 messages)
    price = price_for(PRICES[mode])
    with httpx.Client(timeout=60) as client:
        summaries = {}
        for tenant, options in (("plain", {}), ("plain", {"fixed": True}), ("ours", {})):
            replay.reset()
            runs = [
                replay_session(client, replay, mode, s, tenant, f"t-{tenant}-{options}-{s['id']}", **options)
                for s in sessions
                if mode == "anthropic" or not options
            ]
            tokens = [r.tokens for r in runs]
            summaries[(tenant, bool(options))] = (Summary.of([t for r in tokens for t in r], price), tokens)
    ours, _ = summaries[("ours", False)]
    plain, plain_runs = summaries[("plain", False)]
    limit = Summary.of(physical_limit(plain_runs), price)
    assert ours.hit_ratio >= GOAL * limit.hit_ratio
    assert ours.input_cost_usd < plain.input_cost_usd or mode == "openai"  # OpenAI caches without help
    if mode == "anthropic":
        fixed, _ = summaries[("plain", True)]
        assert plain.hit_ratio == 0.0 and ours.input_cost_usd <= fixed.input_cost_usd * 1.001


def test_a_session_the_guard_stops_ends_there_and_the_replay_goes_on(replay: Replay) -> None:
    """A recorded agent stuck in a loop: the guard stops it; the bench records the stop instead of dying."""
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix the build."},
    ]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "make"}'}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "make: *** [all] Error 2"},
        ]
    messages.append({"role": "assistant", "content": "Done."})
    looping = {"id": "loop", "messages": messages, "tools": [tool]}
    with httpx.Client(timeout=60) as client:
        replayed = replay_session(client, replay, "openai", looping, "ours", "t-guard-loop")
        after = replay_session(client, replay, "openai", load_sessions()[0], "ours", "t-guard-after")
    assert replayed.stopped and 3 <= len(replayed.tokens) < 12
    assert not after.stopped and after.tokens
