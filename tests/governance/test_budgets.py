"""Budgets of a tenant and of an agent session: refused before the provider is called once spent (402,
`x-should-retry: false`, the reset time), flagged past the soft fraction, shared by replicas on one Redis."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import anthropic
import httpx
import openai
import pytest

from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, running_gateway
from tests.governance.test_rate_limits import chat, limited
from tests.redis_target import empty_redis

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
COST = 3.45e-06  # about one short answer of gpt-4o-mini on the simulator, as the headers report it


def spend_until_refused(gateways: list[RunningGateway], session: str | None = None) -> tuple[int, httpx.Response]:
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", **({"x-session-id": session} if session else {})}
    for served in range(50):
        gw = gateways[served % len(gateways)]
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"[[sim:text ok]] {uuid.uuid4()}"}]}
        response = httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30)
        if response.status_code != 200:
            return served, response
    raise AssertionError("never refused")


def test_a_spent_tenant_budget_refuses_without_retries() -> None:
    budget = {"budgets": [{"window": "day", "usd": 6 * COST, "soft_fraction": 0.5}]}
    with running_gateway(**limited(budget)) as gw:
        answers = [chat(gw, text=f"[[sim:text ok]] {i}") for i in range(8)]
        served = [a for a in answers if a.status_code == 200]
        assert 2 <= len(served) < 8 and answers[len(served)].status_code == 402  # checked before, charged after
        flagged = ["x-cachegate-budget" in a.headers for a in served]
        assert not flagged[0] and flagged[-1]  # past half of the budget: the soft limit
        assert served[-1].headers["x-cachegate-budget"].startswith("soft; scope=tenant")
        before = gw.sim_stats()["totals"].get("requests", 0)
        client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=TENANT_KEYS["acme"])  # default: 2 retries
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        error = refused.value
        assert error.status_code == 402 and error.response.headers["x-should-retry"] == "false"
        assert "Budget exceeded" in error.message and "resets at" in error.message
        assert error.body["code"] == "budget_exceeded"  # type: ignore[index]
        with pytest.raises(anthropic.APIStatusError) as claude:
            anthropic.Anthropic(base_url=gw.url, api_key=TENANT_KEYS["acme"]).messages.create(
                model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
        assert claude.value.status_code == 402 and claude.value.body["error"]["type"] == "billing_error"  # type: ignore[index]
        assert gw.sim_stats()["totals"].get("requests", 0) == before  # the provider was never called
        assert chat(gw, "globex").status_code == 200  # another tenant's budget is its own
        refusals = 8 - len(served) + 2  # the chat requests past the budget, then the two SDK requests
        assert f'cachegate_budget_refusals_total{{scope="tenant",tenant="acme"}} {refusals}.0' in gw.metrics()


def test_a_session_budget_stops_that_session_only() -> None:
    with running_gateway(**limited({"session_budgets": [{"window": "lifetime", "tokens": 60}]})) as gw:
        served, refused = spend_until_refused([gw], session="s-1")
        assert 1 <= served < 10 and refused.status_code == 402
        assert "session budget (lifetime)" in refused.json()["error"]["message"]
        assert "does not reset" in refused.json()["error"]["message"]
        assert spend_until_refused([gw], session="s-2")[0] == served  # a fresh session has its own


def test_two_replicas_on_one_redis_share_one_budget() -> None:
    budget = {"budgets": [{"window": "month", "usd": 5.5 * COST}]}
    with empty_redis() as url:
        with running_gateway(**limited(budget)) as alone:
            single, _ = spend_until_refused([alone])
        settings = limited(budget, redis_url=url)
        with running_gateway(**settings) as a, running_gateway(**settings) as b:
            shared, refused = spend_until_refused([a, b])
    assert shared == single >= 3 and refused.status_code == 402  # the replicas count one budget


def test_concurrent_requests_on_two_replicas_overshoot_a_budget_by_at_most_one_request() -> None:
    """Requests hold their worst case before they run, so a burst through two replicas cannot all pass the
    check at once: what is spent ends between the budget and the budget plus one request."""
    budget_usd = 40 * COST
    body = {"model": "gpt-4o-mini", "max_tokens": 32, "messages": [{"role": "user", "content": ""}]}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}

    def send(gw: RunningGateway, i: int) -> httpx.Response:
        prompt = {"role": "user", "content": f"[[sim:tokens 12]] {uuid.uuid4()} {i}"}
        return httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json={**body, "messages": [prompt]})

    with empty_redis() as url:
        # 2 s, not 0.25 s: a cold replica's embedding-model load stalls its loop (see test_rate_limits.py).
        settings = limited({"budgets": [{"window": "day", "usd": budget_usd}]}, redis_url=url, redis_timeout_s=2.0)
        settings["simulator_latency"] = "realistic"
        with running_gateway(**settings) as a, running_gateway(**settings) as b, ThreadPoolExecutor(16) as pool:
            burst = list(pool.map(lambda i: send(a if i % 2 else b, i), range(48)))
            answers = list(burst)
            while answers[-1].status_code != 402 and len(answers) < 200:  # then on until the budget is spent
                answers.append(send(a if len(answers) % 2 else b, len(answers)))
    codes = {r.status_code for r in burst}
    assert codes <= {200, 402, 429} and 429 in codes, codes  # held by requests in flight: retry shortly
    held = next(r for r in burst if r.status_code == 429)
    assert held.json()["error"]["code"] == "budget_held" and float(held.headers["retry-after"]) > 0
    costs = [float(r.headers["x-cachegate-cost-usd"]) for r in answers if r.status_code == 200]
    assert answers[-1].status_code == 402
    assert budget_usd <= sum(costs) <= budget_usd + max(costs), (sum(costs) / budget_usd, len(costs))


def test_spend_against_budget_per_tenant_and_key_on_any_replica() -> None:
    """GET /admin/budgets (and the dashboard) reads the shared counters: any replica shows every replica's
    spend, for the tenant and for each managed key with a budget; /metrics has it as gauges."""
    limits = {"budgets": [{"window": "month", "usd": 1.0}]}
    with empty_redis() as url:
        settings = limited(limits, redis_url=url)
        with running_gateway(**settings) as a, running_gateway(**settings) as b:
            key_budget = {"budgets": [{"window": "day", "tokens": 10_000}]}
            key = httpx.post(f"{a.url}/admin/keys", json={"tenant": "acme", "limits": key_budget}, headers=ADMIN).json()
            answers = [chat(b, text=f"[[sim:text ok]] {i}") for i in range(3)]  # the tenant's key, on B
            for i in range(2):
                answers.append(
                    httpx.post(  # the managed key, on A
                        f"{a.url}/v1/chat/completions",
                        headers={"authorization": f"Bearer {key['secret']}"},
                        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"[[sim:text k]] {i}"}]},
                    )
                )
            rows = httpx.get(f"{a.url}/admin/budgets", headers=ADMIN).json()["budgets"]
            metrics = a.metrics()
    assert [r.status_code for r in answers] == [200] * 5, [r.text[:200] for r in answers]
    tenant = next(r for r in rows if r["tenant"] == "acme" and r["scope"] == "tenant")
    assert tenant["window"] == "month" and tenant["usd_limit"] == 1.0
    assert tenant["usd_spent"] == pytest.approx(sum(float(r.headers["x-cachegate-cost-usd"]) for r in answers))
    mine = next(r for r in rows if r["scope"] == "key" and r["id"] == key["id"])
    assert mine["tokens_spent"] == sum(r.json()["usage"]["total_tokens"] for r in answers[3:]) > 0
    assert mine["used"] == pytest.approx(mine["tokens_spent"] / 10_000) and mine["resets_at"].endswith("+00:00")
    assert f'cachegate_budget_used_ratio{{key="{key["id"]}",tenant="acme",window="day"}}' in metrics
    assert 'cachegate_budget_limit_usd{key="all",tenant="acme",window="month"} 1.0' in metrics
