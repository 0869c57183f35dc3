"""Alert webhooks against a real HTTP receiver: signed, Slack-shaped, once per event (also with two replicas
on one Redis), retried after a 500, for guard stops and blocks, budget soft and hard limits and a fall in a
tenant's cache-hit ratio."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import openai
import pytest

from tests.alerts.conftest import alerts, assert_signed
from tests.alerts.receiver import webhook_receiver
from tests.gateway_harness import TENANT_KEYS, RunningGateway, replicas_on_one_redis, running_gateway
from tests.governance.test_budgets import COST
from tests.governance.test_rate_limits import limited
from tests.guard_stage.conftest import guard_settings, metric

PROMPT_MARKER = "PROMPT-CONTENT-7c1e"
BUDGET = {"budgets": [{"window": "day", "usd": 6 * COST, "soft_fraction": 0.5}]}


def stop_then_block(
    gateways: list[RunningGateway], session: str, headers: dict[str, str] | None = None, **fields: Any
) -> None:
    """Globex's 6-call guard limit: 6 answers, the stop (a normal answer), then blocked requests; `headers`
    and body `fields` go with each request."""
    for i in range(10):
        gw = gateways[i % len(gateways)]
        client = openai.OpenAI(
            base_url=f"{gw.url}/v1",
            api_key=TENANT_KEYS["globex"],
            max_retries=0,
            default_headers={"x-session-id": session, **(headers or {})},
        )
        messages: Any = [{"role": "user", "content": f"{PROMPT_MARKER} question {i}"}]
        if i < 7:
            client.chat.completions.create(model="gpt-4o-mini", messages=messages, extra_body=fields)
        else:
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="gpt-4o-mini", messages=messages, extra_body=fields)


def spend_past_budget(gateways: list[RunningGateway], refusals: int = 3) -> None:
    """Acme's day budget: answers (past half of it: the soft limit) until 402s, then `refusals` more."""
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    refused = 0
    for i in range(40):
        gw = gateways[i % len(gateways)]
        prompt = f"[[sim:text ok]] {PROMPT_MARKER} {uuid.uuid4()}"
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]}
        status = httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30).status_code
        refused += status == 402
        if refused > refusals:
            return
    raise AssertionError("never refused")


def test_guard_stop_and_block_each_alert_once_signed_and_slack_shaped(monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        webhook_receiver() as receiver,
        running_gateway(**guard_settings(alerts=alerts(receiver.url, monkeypatch))) as gw,
    ):
        stop_then_block([gw], "s-alerted")
        stops, blocks = receiver.wait_for_each("guard_stop", "guard_block")
    assert len(stops) == 1 and len(blocks) == 1  # three blocked requests: one block alert
    for delivery in (*stops, *blocks):
        assert_signed(delivery)
        assert delivery.path == "/hooks/cachegate" and delivery.headers["content-type"] == "application/json"
        body = delivery.json
        assert isinstance(body["text"], str) and body["blocks"][0]["type"] == "section"
        facts = body["cachegate"]
        assert facts["tenant"] == "globex" and facts["session"] == "s-alerted"
        assert facts["reason"] and set(facts) >= {"event", "tenant", "session", "reason", "amounts"}
        assert PROMPT_MARKER.encode() not in delivery.body and TENANT_KEYS["globex"].encode() not in delivery.body


def test_budget_soft_and_hard_limits_each_alert_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        webhook_receiver() as receiver,
        running_gateway(**limited(BUDGET, alerts=alerts(receiver.url, monkeypatch))) as gw,
    ):
        spend_past_budget([gw])
        soft, hard = receiver.wait_for_each("budget_soft", "budget_hard")
        sent = metric(gw, 'cachegate_alerts_total{destination="ops",event="budget_soft",outcome="sent"}')
    assert len(soft) == 1 and len(hard) == 1 and sent == 1
    facts = hard[0].json["cachegate"]
    assert facts["tenant"] == "acme" and facts["reason"] == "tenant day budget"
    assert facts["amounts"]["limit_usd"] == pytest.approx(6 * COST) and facts["amounts"]["used"] >= 1
    assert 0.5 <= soft[0].json["cachegate"]["amounts"]["used"] < 1
    assert_signed(hard[0])


def test_two_replicas_on_one_redis_send_each_event_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver() as receiver:
        settings = {**guard_settings(), "tenants": limited(BUDGET)["tenants"]}
        settings["tenants"][1] = guard_settings()["tenants"][1]  # globex: the guard's 6-call limit
        with replicas_on_one_redis(**settings, alerts=alerts(receiver.url, monkeypatch)) as (a, b):
            stop_then_block([a, b], "s-two-replicas")
            spend_past_budget([a, b], refusals=4)
            kinds = ("guard_stop", "guard_block", "budget_hard", "budget_soft")
            counts = {kind: len(found) for kind, found in zip(kinds, receiver.wait_for_each(*kinds), strict=True)}
    assert counts == {"guard_stop": 1, "guard_block": 1, "budget_hard": 1, "budget_soft": 1}


def test_a_failed_delivery_is_retried_with_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver(statuses=[500, 503]) as receiver:
        config = alerts(receiver.url, monkeypatch, destination={"events": ["budget_hard"]})
        with running_gateway(**limited(BUDGET, alerts=config)) as gw:
            spend_past_budget([gw])
            tries = receiver.wait_for("budget_hard", count=3)
            outcome = 'cachegate_alerts_total{destination="ops",event="budget_hard",outcome="%s"}'
            retried, sent, failed = (metric(gw, outcome % o) for o in ("retried", "sent", "failed"))
    assert len(tries) == 3 and len({t.body for t in tries}) == 1  # the same alert, signed afresh each try
    for delivery in tries:
        assert_signed(delivery)
    assert (retried, sent, failed) == (2, 1, 0)
    assert not receiver.events("budget_soft")  # the destination takes only the kinds it lists


def test_a_fall_in_the_cache_hit_ratio_alerts_once(monkeypatch: pytest.MonkeyPatch) -> None:
    watch = {"window": 4, "baseline": 4, "drop_fraction": 0.5}
    policy = {"response_cache": {"semantic": False}, "guard": {"enabled": False}}
    with webhook_receiver() as receiver:
        config = alerts(receiver.url, monkeypatch, destination={"events": ["cache_hit_drop"]}, cache_hit=watch)
        with running_gateway(policy=policy, alerts=config) as gw:
            client = gw.openai()
            repeated = [{"role": "user", "content": "[[sim:text ok]] the same question"}]
            for _ in range(5):  # a miss, then 4 response-cache hits: the baseline
                client.chat.completions.create(model="gpt-4o-mini", messages=repeated)  # type: ignore[arg-type]
            for i in range(10):  # new questions only: the ratio falls, and stays down
                fresh = [{"role": "user", "content": f"[[sim:text ok]] question {i}"}]
                client.chat.completions.create(model="gpt-4o-mini", messages=fresh)  # type: ignore[arg-type]
            drops = receiver.wait_for("cache_hit_drop")
    assert len(drops) == 1
    facts = drops[0].json["cachegate"]
    assert facts["tenant"] == "acme" and facts["amounts"] == {"ratio": 0.25, "baseline": 0.75}
    assert_signed(drops[0])


def test_a_destination_with_a_minimum_interval_gets_one_alert_per_kind_and_tenant_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with webhook_receiver() as receiver:
        config = alerts(
            f"{receiver.url}/ops", monkeypatch, destination={"events": ["guard_stop"], "min_interval_s": 60}
        )
        config["destinations"].append({"name": "audit", "url": f"{receiver.url}/audit"})  # unsigned, every kind
        with running_gateway(**guard_settings(alerts=config)) as gw:
            stop_then_block([gw], "s-first")
            stop_then_block([gw], "s-second")
            stops = receiver.wait_for("guard_stop", count=3)
            throttled = metric(gw, 'cachegate_alerts_total{destination="ops",event="guard_stop",outcome="throttled"}')
    assert sorted(d.path.rsplit("/", 1)[1] for d in stops) == ["audit", "audit", "ops"] and throttled == 1
    assert {d.json["cachegate"]["session"] for d in stops if d.path.endswith("/audit")} == {"s-first", "s-second"}
    assert all("x-cachegate-signature" not in d.headers for d in stops if d.path.endswith("/audit"))
