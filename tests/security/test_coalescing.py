"""Request coalescing: identical in-flight cacheable requests wait for one upstream call (issue #11, item 10).

The simulator answers slowly (realistic latency plus a long answer) so that the concurrent requests
overlap; the count of upstream calls is the simulators' own request counter.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.redis_target import redis_url

REDIS_URL = redis_url(6)  # a db of its own: no other suite flushes it (on a cluster, none while this runs)
CALLERS = 20
ANSWER = " ".join(["coalesced"] * 60)  # ~60 output tokens: the simulated answer takes well over half a second
BRITTLE = {  # no retries: an injected fault reaches the caller
    "name": "brittle",
    "provider": "openai",
    "model": "gpt-4o-mini",
    "api_base": "embedded-sim",
    "retries": 0,
}


def _settings(**overrides: Any) -> dict[str, Any]:
    from tests.gateway_harness import gateway_settings

    base = gateway_settings()
    return {
        "simulator_latency": "realistic",
        "models": [*base["models"], BRITTLE],
        "policy": {"response_cache": {"semantic": False}, "guard": {"enabled": False}},
        **overrides,
    }


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(**_settings()) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def pair() -> Iterator[list[RunningGateway]]:
    settings = _settings(redis_url=REDIS_URL)
    with running_gateway(**settings) as first, running_gateway(**settings) as second:
        yield [first, second]


def _prompt(tag: str) -> list[Any]:
    return [{"role": "user", "content": f"[[sim:text {ANSWER}]] {tag} {uuid.uuid4().hex}"}]


def _upstream_calls(*gateways: RunningGateway) -> int:
    return sum(int(gw.sim_stats()["totals"].get("requests", 0)) for gw in gateways)


def _metric(gw: RunningGateway, name: str) -> float:
    found = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.e+-]+)$", gw.metrics(), re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def _together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls on threads released at the same instant; each result is a value or the exception."""
    results: list[Any] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = calls[index]()
        except Exception as exc:  # the test inspects it
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a coalesced request hung"
    return results


def _ask(client: openai.OpenAI, messages: list[Any], model: str = "gpt-4o-mini", stream: bool = False) -> str:
    if stream:
        chunks = client.chat.completions.create(model=model, messages=messages, temperature=0, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    completion = client.chat.completions.create(model=model, messages=messages, temperature=0)
    return completion.choices[0].message.content or ""


def test_twenty_identical_requests_make_one_upstream_call(gw: RunningGateway) -> None:
    gw.reset_sim()
    before = _metric(gw, "cachegate_response_cache_coalesced_total")
    client, messages = gw.openai(), _prompt("one-replica")
    answers = _together([lambda: _ask(client, messages) for _ in range(CALLERS)])
    assert answers == [ANSWER] * CALLERS
    assert _upstream_calls(gw) == 1
    assert _metric(gw, "cachegate_response_cache_coalesced_total") - before == CALLERS - 1


def test_streaming_followers_replay_the_leaders_answer(gw: RunningGateway) -> None:
    gw.reset_sim()
    client, messages = gw.openai(), _prompt("streams")
    answers = _together([lambda i=i: _ask(client, messages, stream=i % 2 == 0) for i in range(10)])
    assert answers == [ANSWER] * 10
    assert _upstream_calls(gw) == 1


def test_two_replicas_on_one_redis_make_one_upstream_call(pair: list[RunningGateway]) -> None:
    assert [g.services.store.backend for g in pair] == ["redis", "redis"]
    for replica in pair:
        replica.reset_sim()
    clients, messages = [g.openai() for g in pair], _prompt("two-replicas")
    answers = _together([lambda i=i: _ask(clients[i % 2], messages) for i in range(CALLERS)])
    assert answers == [ANSWER] * CALLERS
    assert _upstream_calls(*pair) == 1


def test_tenants_never_share_a_flight(gw: RunningGateway) -> None:
    gw.reset_sim()
    acme, globex, messages = gw.openai("acme"), gw.openai("globex"), _prompt("tenants")
    answers = _together([lambda i=i: _ask(acme if i % 2 else globex, messages) for i in range(10)])
    assert answers == [ANSWER] * 10
    assert _upstream_calls(gw) == 2


def test_a_failing_leader_never_strands_its_followers(gw: RunningGateway) -> None:
    gw.reset_sim()
    gw.queue_faults("500", model="gpt-4o-mini")  # the one call that reaches the provider first fails
    client, messages = gw.openai(), _prompt("leader-fails")
    fell_through = 'cachegate_response_cache_coalesce_fallthroughs_total{reason="leader_failed"}'
    before = _metric(gw, fell_through)
    started = time.monotonic()
    results = _together([lambda: _ask(client, messages, model="brittle") for _ in range(10)])
    assert time.monotonic() - started < 20
    errors = [r for r in results if isinstance(r, Exception)]
    assert all(isinstance(e, openai.InternalServerError) for e in errors)
    assert len(errors) <= 1 and results.count(ANSWER) == 10 - len(errors)
    assert _metric(gw, fell_through) > before  # followers waited for the leader, then made their own call
    # The failed answer was never stored: a later identical request is answered, not an error.
    assert _ask(client, messages, model="brittle") == ANSWER
