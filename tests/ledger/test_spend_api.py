"""The ledger through the real HTTP server: spend, budgets and savings survive a restart on a flushed
Redis and a flush mid-month; GET /admin/spend groups, filters and pages; /admin/spend/export streams CSV
and JSON lines; a database that fails costs records (counted), never a request."""

from __future__ import annotations

import csv
import io
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg
import pytest

from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway, running_gateway
from tests.governance.test_rate_limits import limited
from tests.postgres_target import fresh_database
from tests.redis_target import empty_redis, flush

BUDGETS = {"budgets": [{"window": "month", "usd": 5.0}, {"window": "day", "tokens": 10_000_000}]}
LONG_PROMPT = "Answer as briefly as you can about the weather in the mountains. " * 120  # > 1,024 tokens: cached
FAST = {"flush_ms": 20, "seed_interval_s": 0.2}


def chat(gw: RunningGateway, tenant: str = "acme", session: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {TENANT_KEYS[tenant]}", **({"x-session-id": session} if session else {})}
    body = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": LONG_PROMPT},
            {"role": "user", "content": f"[[sim:text ok]] {uuid.uuid4()}"},
        ],
    }
    response = httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30)
    assert response.status_code == 200, response.text[:300]
    return response


def admin(gw: RunningGateway, path: str, **params: Any) -> Any:
    response = httpx.get(f"{gw.url}{path}", params=params, headers=ADMIN_HEADERS, timeout=30)
    response.raise_for_status()
    return response.json()


def eventually(read: Callable[[], Any], wanted: Callable[[Any], bool], timeout_s: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if wanted(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def shown(gw: RunningGateway) -> dict[str, float]:
    """What an operator sees, flat: budgets spent, spend by key, this month's totals on the dashboard."""
    seen: dict[str, float] = {}
    for row in admin(gw, "/admin/budgets")["budgets"]:
        where = f"budget {row['tenant']} {row['scope']} {row['window']}"
        seen |= {f"{where} usd": row["usd_spent"], f"{where} tokens": row["tokens_spent"]}
    for row in admin(gw, "/admin/spend", by="key")["rows"]:
        seen |= {f"key {row['key']} {name}": row[name] for name in ("cost_usd", "saved_usd", "requests")}
    month = admin(gw, "/admin/dashboard/data")["month"]
    seen |= {f"month {name}": value for name, value in month.items() if name != "saved_usd_by_source"}
    seen |= {f"month saved by {source}": value for source, value in month["saved_usd_by_source"].items()}
    return seen


def same(now: dict[str, float], before: dict[str, float]) -> bool:
    return now.keys() == before.keys() and bool(now == pytest.approx(before))


def test_spend_budgets_and_savings_survive_a_restart_and_redis_flushes(tmp_path: Path) -> None:
    ledger = {"url": f"sqlite:///{tmp_path / 'ledger.sqlite3'}", **FAST}
    with empty_redis() as redis_url:
        settings = limited(BUDGETS, redis_url=redis_url, ledger=ledger)
        with running_gateway(**settings) as first:
            answers = [chat(first) for _ in range(3)] + [chat(first, "globex")]
            eventually(lambda: admin(first, "/admin/spend")["totals"]["requests"], lambda n: n == 4)
            before = shown(first)
        cost = sum(float(a.headers["x-cachegate-cost-usd"]) for a in answers[:3])
        assert before["budget acme tenant month usd"] == pytest.approx(cost) and cost > 0
        assert before["budget acme tenant day tokens"] > 0
        assert before["month saved by upstream"] > 0  # prompt-cache reads on the repeated system prompt
        flush(redis_url)  # a Redis flush while the gateway is down: a restart on an empty Redis

        with running_gateway(**settings) as second:
            after_restart = eventually(lambda: shown(second), lambda now: same(now, before))
            flush(redis_url)  # and a flush while it runs, mid-month
            after_flush = eventually(lambda: shown(second), lambda now: same(now, before))
            more = chat(second)  # the budget counts on from the ledger's total
            spent = eventually(
                lambda: admin(second, "/admin/budgets")["budgets"],
                lambda rows: any(r["usd_spent"] > cost for r in rows if r["tenant"] == "acme"),
            )
    assert after_restart == pytest.approx(before)
    assert after_flush == pytest.approx(before)
    month = next(r for r in spent if (r["tenant"], r["window"]) == ("acme", "month"))
    assert month["usd_spent"] == pytest.approx(cost + float(more.headers["x-cachegate-cost-usd"]))


def test_spend_by_tenant_key_model_session_and_day_with_filters_and_pages() -> None:
    with running_gateway(ledger={"url": "sqlite://", **FAST}) as gw:
        for session in ("s-a", "s-a", "s-b"):
            chat(gw, session=session)
        chat(gw, "globex", session="s-c")
        eventually(lambda: admin(gw, "/admin/spend")["totals"]["requests"], lambda n: n == 4)
        tenants = admin(gw, "/admin/spend", by="tenant")
        sessions = admin(gw, "/admin/spend", by="session", tenant="acme")
        first_page = admin(gw, "/admin/spend", by="session", limit=2)
        second_page = admin(gw, "/admin/spend", by="session", limit=2, offset=2)
        days = admin(gw, "/admin/spend", by="day")
        models = admin(gw, "/admin/spend", by="model", session="s-a")
        none = admin(gw, "/admin/spend", by="key", since=0, until=1)
        bad = httpx.get(f"{gw.url}/admin/spend", params={"by": "prompt"}, headers=ADMIN_HEADERS)
        anonymous = httpx.get(f"{gw.url}/admin/spend")
    assert {r["tenant"]: r["requests"] for r in tenants["rows"]} == {"acme": 3, "globex": 1}
    assert {r["session"]: r["requests"] for r in sessions["rows"]} == {"s-a": 2, "s-b": 1}
    assert sessions["totals"]["requests"] == 3 and sessions["totals"]["cost_usd"] > 0
    assert first_page["next_offset"] == 2 and second_page["next_offset"] is None
    paged = [r["session"] for r in first_page["rows"] + second_page["rows"]]
    assert sorted(paged) == ["s-a", "s-b", "s-c"] and first_page["rows"][0]["session"] == "s-a"  # most spent first
    assert [r["requests"] for r in days["rows"]] == [4]
    assert [(r["model"], r["requests"]) for r in models["rows"]] == [("gpt-4o-mini", 2)]
    assert none["rows"] == [] and none["totals"]["cost_usd"] == 0.0
    assert bad.status_code == 400 and anonymous.status_code == 401


def test_export_as_csv_and_json_lines() -> None:
    with running_gateway(ledger={"url": "sqlite://", **FAST}) as gw:
        answers = [chat(gw, session="=1+2"), chat(gw, session="plain")]  # a caller's formula for a spreadsheet
        eventually(lambda: admin(gw, "/admin/spend")["totals"]["requests"], lambda n: n == 2)
        jsonl = httpx.get(f"{gw.url}/admin/spend/export", params={"format": "jsonl"}, headers=ADMIN_HEADERS)
        table = httpx.get(f"{gw.url}/admin/spend/export", params={"format": "csv"}, headers=ADMIN_HEADERS)
        one = httpx.get(f"{gw.url}/admin/spend/export", params={"session": "plain"}, headers=ADMIN_HEADERS)
    records = [orjson.loads(line) for line in jsonl.text.splitlines()]
    assert jsonl.headers["content-type"] == "application/x-ndjson"
    assert [r["id"] for r in records] == [a.headers["x-request-id"] for a in answers]
    assert records[0]["tokens"]["cache_read"] + records[1]["tokens"]["cache_read"] > 0
    assert records[1]["cost_usd"] == pytest.approx(float(answers[1].headers["x-cachegate-cost-usd"]))
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert table.headers["content-type"].startswith("text/csv")
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    assert rows[0]["session"] == "'=1+2" and rows[1]["session"] == "plain"  # never a live formula
    assert int(rows[1]["tokens_input"]) == records[1]["tokens"]["input"]
    assert [orjson.loads(line)["session"] for line in one.text.splitlines()] == ["plain"]


def test_a_failing_database_costs_records_not_requests(postgres_url: str) -> None:
    with running_gateway(ledger={"url": fresh_database(postgres_url), **FAST}) as gw:
        chat(gw)
        eventually(lambda: admin(gw, "/admin/spend")["totals"]["requests"], lambda n: n == 1)
        with psycopg.connect(gw.services.settings.ledger.url, autocommit=True) as conn:
            conn.execute("DROP TABLE records")  # the database fails under the gateway
        answers = [chat(gw) for _ in range(3)]
        dropped = eventually(
            gw.metrics, lambda text: 'cachegate_ledger_records_dropped_total{reason="database"} 3.0' in text
        )
        spend = httpx.get(f"{gw.url}/admin/spend", headers=ADMIN_HEADERS)
    assert [a.status_code for a in answers] == [200] * 3
    assert 'cachegate_ledger_records_dropped_total{reason="database"} 3.0' in dropped
    assert spend.status_code == 503 and "ledger" in spend.text


def test_the_ledger_off_leaves_the_api_answering_404() -> None:
    with running_gateway(ledger={"enabled": False}) as gw:
        chat(gw)
        spend = httpx.get(f"{gw.url}/admin/spend", headers=ADMIN_HEADERS)
        month = admin(gw, "/admin/dashboard/data")["month"]
    assert spend.status_code == 404 and "ledger" in spend.text and month is None


def test_requests_without_a_key_reach_the_ledger_only_at_the_capped_rate() -> None:
    """Anyone who can reach the gateway cannot fill the database: the request log's cap comes first."""
    settings = {"ledger": {"url": "sqlite://", **FAST}, "request_log": {"unauthenticated_per_s": 2.0}}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    with running_gateway(**settings) as gw:
        started = time.monotonic()
        with httpx.Client(base_url=gw.url, timeout=30) as client:
            codes = {client.post("/v1/chat/completions", json=body).status_code for _ in range(100)}
        seconds = time.monotonic() - started
        chat(gw)
        totals = eventually(lambda: admin(gw, "/admin/spend", by="tenant")["rows"], lambda rows: len(rows) == 2)
    unknown = next(r for r in totals if r["tenant"] == "unknown")
    assert codes == {401} and 1 <= unknown["requests"] <= 2 + 2.0 * seconds
