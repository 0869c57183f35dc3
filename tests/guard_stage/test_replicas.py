"""Shared state: one session served by two gateway replicas sharing Redis stops at the same step as on
one gateway; with Redis down, each replica falls back to its own memory and never answers 500."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.guard_stage.agents import OpenAIAgent
from tests.guard_stage.conftest import admin, guard_settings, metric
from tests.redis_target import flush, redis_url

REDIS_URL = redis_url(10)  # flushed: a database no other suite uses
LS = {"command": "ls"}


def ladder(agent: OpenAIAgent, replicas: list[RunningGateway], session: str) -> list[str]:
    """The agent loops; request k goes to replica k mod n. Returns the guard's action per request."""
    clients = [gw.openai(default_headers={"x-session-id": session}) for gw in replicas]
    actions = []
    for k in range(9):
        agent.client = clients[k % len(clients)]
        outcome = agent.step("bash", {"command": "pytest"} if k < 2 else LS, "same output")
        actions.append(outcome.action)
        assert outcome.status in (200, 400)
    return actions


@pytest.fixture(scope="module")
def redis_pair() -> Iterator[list[RunningGateway]]:
    flush(REDIS_URL)
    settings = guard_settings(redis_url=REDIS_URL)
    with running_gateway(**settings) as first, running_gateway(**settings) as second:
        yield [first, second]
    flush(REDIS_URL)


def test_two_replicas_stop_at_the_same_step_as_one(gw: RunningGateway, redis_pair: list[RunningGateway]) -> None:
    assert [replica.services.store.backend for replica in redis_pair] == ["redis", "redis"]
    one = ladder(OpenAIAgent(gw, "replicas-one"), [gw], "replicas-one")
    two = ladder(OpenAIAgent(redis_pair[0], "replicas-two"), redis_pair, "replicas-two")
    assert one == two == ["continue"] * 6 + ["nudge", "stop", "block"]
    # Both replicas see the same session state.
    views = [admin(gw, "GET", "/session", tenant="acme", session="replicas-two").json() for gw in redis_pair]
    assert views[0]["strikes"] == views[1]["strikes"] and views[0]["counters"]["llm_calls"] == 9


def test_redis_down_falls_back_per_replica() -> None:
    with running_gateway(**guard_settings(redis_url="redis://127.0.0.1:1/0", redis_timeout_s=0.05)) as gw:
        agent = OpenAIAgent(gw, "redis-down")
        assert ladder(agent, [gw], "redis-down") == ["continue"] * 6 + ["nudge", "stop", "block"]
        assert metric(gw, 'cachegate_guard_errors_total{kind="state_fallback"}') > 0
        assert metric(gw, "cachegate_state_fallbacks_total") > 0
