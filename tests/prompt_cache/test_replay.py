"""Recorded agent sessions replayed through the gateway: the hit ratio stays at the physical limit."""

from __future__ import annotations

from collections.abc import Iterator

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
            summaries[(tenant, bool(options))] = (Summary.of([t for r in runs for t in r], price), runs)
    ours, _ = summaries[("ours", False)]
    plain, plain_runs = summaries[("plain", False)]
    limit = Summary.of(physical_limit(plain_runs), price)
    assert ours.hit_ratio >= GOAL * limit.hit_ratio
    assert ours.input_cost_usd < plain.input_cost_usd or mode == "openai"  # OpenAI caches without help
    if mode == "anthropic":
        fixed, _ = summaries[("plain", True)]
        assert plain.hit_ratio == 0.0 and ours.input_cost_usd <= fixed.input_cost_usd * 1.001
