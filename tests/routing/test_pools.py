"""Deployment pools through the real server: several `models` entries with one name form a pool; a session
stays on the deployment holding its prompt-cache prefix (the simulator keeps one cache per key, so each
deployment below is a cache of its own); replicas on one Redis share affinity and cooldowns; a failing
deployment cools down and the request fails over before the client sees anything, its record saying where
it moved from and what the lost prefix cost."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway.config import Settings
from tests.alerts.conftest import alerts, assert_signed
from tests.alerts.receiver import webhook_receiver
from tests.gateway_harness import (
    ADMIN_HEADERS,
    ADMIN_KEY,
    TENANT_KEYS,
    RunningGateway,
    gateway_settings,
    replicas_on_one_redis,
    running_gateway,
)
from tests.processes import simulator
from tests.servers import run_app_in_thread

POOL = "pooled-mini"
KEYS = {"east": "sk-pool-east", "west": "sk-pool-west", "eu": "sk-pool-eu"}
# Each deployment its own provider model id, so that a fault queued for one model hits one deployment.
MODELS = {"east": "gpt-4o-mini", "west": "gpt-4o-mini-2024-07-18", "eu": "gpt-4o"}
SYSTEM_WORDS = 1600  # past the simulator's 1,024-token caching threshold


@pytest.fixture(autouse=True)
def _deployment_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in KEYS.items():
        monkeypatch.setenv(f"POOL_KEY_{name.upper()}", key)


def pool(api_base: str, names: tuple[str, ...] = ("east", "west")) -> list[dict[str, Any]]:
    return [
        {
            "name": POOL,
            "provider": "openai",
            "model": MODELS[name],
            "api_base": api_base,
            "api_key_env": f"POOL_KEY_{name.upper()}",
            "deployment_id": name,
            "region": name,
            "retries": 0,
        }
        for name in names
    ]


def settings(api_base: str, names: tuple[str, ...] = ("east", "west"), **pools: Any) -> dict[str, Any]:
    base = gateway_settings()
    return {**base, "models": [*base["models"], *pool(api_base, names)], "pools": pools}


def chat(gw: RunningGateway, session: str, turns: list[str]) -> tuple[dict[str, Any], str]:
    """One turn of a session with a long, session-specific system prompt; the answer and its request id."""
    system = f"You are agent {session}. " + " ".join(f"rule{i}" for i in range(SYSTEM_WORDS))
    messages = [{"role": "system", "content": system}, *({"role": "user", "content": t} for t in turns)]
    response = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": session},
        json={"model": POOL, "messages": messages},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json(), response.headers["x-request-id"]


def record(gw: RunningGateway, request_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5.0
    while True:
        found = httpx.get(
            f"{gw.url}/v1/requests/{request_id}", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"}
        )
        if found.status_code == 200:
            data: dict[str, Any] = found.json()
            return data
        assert time.monotonic() < deadline, found.text
        time.sleep(0.05)


def deployment_of(gw: RunningGateway, request_id: str) -> dict[str, Any]:
    placement: dict[str, Any] = record(gw, request_id)["deployment"]
    return placement


def run_sessions(gw: RunningGateway, sessions: int, turns: int) -> tuple[list[set[str]], int, int]:
    """Each session's deployments, requests whose prompt hit the provider's cache, and all requests."""
    used: list[set[str]] = []
    hits = total = 0
    for s in range(sessions):
        session, history, seen = f"pool-{uuid.uuid4().hex[:8]}-{s}", [], set()
        for turn in range(turns):
            history.append(f"[[sim:text ok]] turn {turn}")
            answer, request_id = chat(gw, session, history)
            cached = (answer["usage"].get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            hits, total = hits + (cached > 0), total + 1
            seen.add(deployment_of(gw, request_id)["id"])
        used.append(seen)
    return used, hits, total


def test_entries_with_one_name_form_a_pool() -> None:
    config = Settings(**settings("embedded-sim"))
    assert [m.deployment_id for m in config.models if m.name == POOL] == ["east", "west"]
    assert [m.name for m in config.routes].count(POOL) == 1
    with running_gateway(**settings("embedded-sim")) as gw:
        listed = httpx.get(f"{gw.url}/v1/models", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"})
        assert [m["id"] for m in listed.json()["data"]].count(POOL) == 1


def test_deployment_ids_are_unique_in_a_pool() -> None:
    twice = settings("embedded-sim")
    twice["models"][-1]["deployment_id"] = "east"
    with pytest.raises(ValidationError, match="duplicate deployment ids"):
        Settings(**twice)


def test_sessions_keep_their_deployment_and_its_cache_where_balancing_loses_it() -> None:
    """The bench's claim in small: sticky sessions miss the cache once each (their first turn); balancing
    every request over three deployments (separate caches) misses it again on each new deployment."""
    names = ("east", "west", "eu")
    with running_gateway(**settings("embedded-sim", names)) as gw:
        used, sticky_hits, total = run_sessions(gw, sessions=4, turns=5)
    assert all(len(deployments) == 1 for deployments in used), used
    assert sticky_hits == total - 4  # every turn after the first read the session's prefix
    with running_gateway(**settings("embedded-sim", names, affinity=False)) as gw:
        used, balanced_hits, total = run_sessions(gw, sessions=4, turns=5)
    assert any(len(deployments) > 1 for deployments in used)
    assert balanced_hits < sticky_hits


@pytest.fixture(scope="module")
def sim() -> Iterator[str]:
    with simulator(ADMIN_KEY) as url:
        yield url


def queue_faults(sim: str, model: str, *faults: str) -> None:
    body = {"faults": list(faults), "model": model}
    httpx.post(f"{sim}/sim/faults", json=body, headers=ADMIN_HEADERS).raise_for_status()


def test_replicas_share_affinity_and_cooldowns(sim: str) -> None:
    with replicas_on_one_redis(**settings(f"{sim}/v1")) as (a, b):
        session = f"shared-{uuid.uuid4().hex[:8]}"
        _, first = chat(a, session, ["[[sim:text one]]"])
        home = deployment_of(a, first)["id"]
        for turn in range(4):  # either replica keeps the session where its prefix is
            answer, request_id = chat((a, b)[turn % 2], session, ["[[sim:text one]]", f"[[sim:text ok]] {turn}"])
            assert deployment_of(a, request_id) == {**deployment_of(a, first), "reason": "sticky"}
            assert answer["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
        # The home deployment fails once on replica a: that request moves before its client sees anything ...
        queue_faults(sim, MODELS[home], "500")
        _, moved = chat(a, session, ["[[sim:text one]]", "[[sim:text after the fault]]"])
        placement = deployment_of(a, moved)
        other = next(name for name in ("east", "west") if name != home)
        assert placement["id"] == other and placement["reason"] == "failover"
        assert placement["moved_from"] == home and placement["lost_prefix_usd"] > 0
        # ... and replica b, which saw no failure, sends no new session there while it cools down.
        for n in range(8):
            _, request_id = chat(b, f"new-{uuid.uuid4().hex[:8]}-{n}", ["[[sim:text hi]]"])
            assert deployment_of(b, request_id)["id"] == other
        assert (
            f'cachegate_deployment_cooldowns_total{{deployment="{home}",model="{POOL}",reason="server_error"}} 1.0'
            in (a.metrics())
        )


def test_a_429_rests_the_deployment_for_its_retry_after(sim: str) -> None:
    with running_gateway(**settings(f"{sim}/v1", max_cooldown_s=1.0)) as gw:
        session = f"limited-{uuid.uuid4().hex[:8]}"
        _, first = chat(gw, session, ["[[sim:text one]]"])
        home = deployment_of(gw, first)["id"]
        queue_faults(sim, MODELS[home], "429")
        _, moved = chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]"])
        assert deployment_of(gw, moved)["moved_from"] == home
        # The session now lives on the other deployment; the rested one takes new sessions again after
        # its retry-after (capped at max_cooldown_s here).
        time.sleep(1.2)
        seen = set()
        for n in range(12):
            _, request_id = chat(gw, f"after-{uuid.uuid4().hex[:8]}-{n}", ["[[sim:text hi]]"])
            seen.add(deployment_of(gw, request_id)["id"])
        assert home in seen


def rate_limited_provider(spent_key: str, hits: list[str]) -> Starlette:
    """A provider answering every chat with its rate-limit headers: `spent_key`'s limit is used up (it
    would say 429 next), every other key's untouched."""

    async def chat_completions(request: Request) -> JSONResponse:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        hits.append(key)
        left = "0" if key == spent_key else "100"
        limits = {"x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": left}
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        }
        return JSONResponse(answer, headers=limits)

    return Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"])])


def test_a_deployment_whose_headers_say_its_limit_is_spent_takes_no_new_sessions() -> None:
    hits: list[str] = []
    provider_app = rate_limited_provider(KEYS["east"], hits)
    with run_app_in_thread(provider_app) as provider, running_gateway(**settings(f"{provider}/v1")) as gw:
        spent_session = ""
        while KEYS["east"] not in hits:  # until east has answered once (and said it has nothing left)
            spent_session = f"probe-{uuid.uuid4().hex[:8]}"
            chat(gw, spent_session, ["hi"])
        for n in range(10):
            _, request_id = chat(gw, f"fresh-{uuid.uuid4().hex[:8]}-{n}", ["hi"])
            assert deployment_of(gw, request_id)["id"] == "west"
        # A session on it leaves too: no headroom left there.
        _, request_id = chat(gw, spent_session, ["hi", "again"])
        placement = deployment_of(gw, request_id)
        assert (placement["id"], placement["reason"], placement["moved_from"]) == (
            "west",
            "moved:no_headroom",
            "east",
        )
        assert 'cachegate_deployment_headroom{deployment="east",model="pooled-mini"} 0.0' in gw.metrics()


def test_a_tenants_fallback_pool_answers_once_its_pool_is_exhausted(sim: str, caplog: pytest.LogCaptureFixture) -> None:
    config = settings(f"{sim}/v1")
    config["tenants"][0]["fallbacks"] = {POOL: ["gpt-4o-mini"]}  # acme's; globex has none
    with running_gateway(**config) as gw, caplog.at_level(logging.INFO, logger="cachegate.request"):
        queue_faults(sim, MODELS["east"], "500")
        queue_faults(sim, MODELS["west"], "500")
        _, request_id = chat(gw, f"fallback-{uuid.uuid4().hex[:8]}", ["[[sim:text saved]]"])
        placement = deployment_of(gw, request_id)
        assert (placement["pool"], placement["reason"]) == ("gpt-4o-mini", "fallback")
        assert record(gw, request_id)["route"] == "gpt-4o-mini"
        assert any(
            f"request={request_id} " in line and " deployment=gpt-4o-mini#0:fallback " in line
            for line in caplog.messages
        )
        queue_faults(sim, MODELS["east"], "500")
        queue_faults(sim, MODELS["west"], "500")
        refused = httpx.post(
            f"{gw.url}/v1/chat/completions",
            headers={"authorization": f"Bearer {TENANT_KEYS['globex']}"},
            json={"model": POOL, "messages": [{"role": "user", "content": "[[sim:text lost]]"}]},
            timeout=30,
        )
        assert refused.status_code == 502, refused.text


def test_without_its_redis_a_pool_still_routes_and_keeps_sessions_per_replica() -> None:
    with running_gateway(**settings("embedded-sim"), redis_url="redis://127.0.0.1:1/0") as gw:
        session = f"no-redis-{uuid.uuid4().hex[:8]}"
        homes = {deployment_of(gw, chat(gw, session, ["[[sim:text ok]]", f"turn {n}"])[1])["id"] for n in range(3)}
        assert len(homes) == 1
        assert "cachegate_state_fallbacks_total" in gw.metrics()


def test_a_cooldown_sends_one_signed_alert(sim: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rested deployment is an operator's event: one webhook per cooldown, naming pool and deployment."""
    with webhook_receiver() as receiver:
        config = {**settings(f"{sim}/v1", max_cooldown_s=1.0), "alerts": alerts(receiver.url, monkeypatch)}
        with running_gateway(**config) as gw:
            session = f"alerted-{uuid.uuid4().hex[:8]}"
            _, first = chat(gw, session, ["[[sim:text one]]"])
            home = deployment_of(gw, first)["id"]
            queue_faults(sim, MODELS[home], "500")
            chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]"])
            cooldowns = receiver.wait_for("deployment_cooldown")
    assert len(cooldowns) == 1
    assert_signed(cooldowns[0])
    facts = cooldowns[0].json["cachegate"]
    assert facts["event"] == "deployment_cooldown" and home in cooldowns[0].json["text"]
    assert facts["reason"] == "server_error" and facts["amounts"]["seconds"] > 0
