"""The ledger on both backends (SQLite file, PostgreSQL server): migrations applied once, spend grouped by
tenant, key, model, session and day with filters and pages that neither overlap nor skip, exports beyond
one page in order, retention by month, and the writer losing records (counted) instead of failing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from gateway.config.ledger import LedgerConfig
from gateway.ledger import Filters, Ledger, create_ledger
from gateway.ledger.ledger import EXPORT_PAGE
from gateway.ledger.rows import to_row, utc_day
from gateway.metrics import GatewayMetrics
from tests.ledger.month import month_start, record, synthetic_month


async def opened(url: str, **config: object) -> Ledger:
    ledger = create_ledger(LedgerConfig(url=url, flush_ms=20, **config), GatewayMetrics())  # type: ignore[arg-type]
    assert ledger is not None and await ledger.open()
    return ledger


@pytest.fixture
async def ledger(ledger_url: str) -> AsyncIterator[Ledger]:
    ledger = await opened(ledger_url)
    yield ledger
    await ledger.close()


async def test_migrations_run_once_whoever_opens_first(ledger_url: str) -> None:
    ledgers = await asyncio.gather(*(opened(ledger_url) for _ in range(3)))  # replicas starting together
    again = await opened(ledger_url)
    try:
        assert await again.backend.fetch("SELECT version, name FROM schema_migrations") == [(1, "records")]
    finally:
        for one in [*ledgers, again]:
            await one.close()


async def test_spend_grouped_filtered_and_paged(ledger: Ledger) -> None:
    now = time.time()
    start = month_start(now)
    rows = [
        record(start + 10, key="k-1", cost_usd=1.0, saved_usd=0.5, source="upstream"),
        record(start + 20, key="k-1", cost_usd=2.0, side_cost_usd=0.25, session="s-1"),
        record(start + 30, key="k-2", model="claude-sonnet-4-5", cost_usd=4.0, status=500, session="s-1"),
        record(start + 40, tenant="globex", key="g-1", cost_usd=8.0, saved_usd=1.0, source="response_cache"),
        record(start - 86400, key="k-1", cost_usd=100.0),  # last month
    ]
    await ledger.backend.insert([to_row(r) for r in rows])
    month = Filters(since=start)
    by_key = await ledger.spend("key", Filters(tenant="acme", since=start), 10, 0)
    assert [(r["key"], r["cost_usd"], r["requests"], r["errors"]) for r in by_key] == [
        ("k-2", 4.0, 1, 1),
        ("k-1", 3.25, 2, 0),  # the side call (a compaction summary) is spend too
    ]
    assert by_key[1]["input_tokens"] == 200 and by_key[1]["output_tokens"] == 40
    by_tenant = await ledger.spend("tenant", month, 10, 0)
    assert [(r["tenant"], r["cost_usd"]) for r in by_tenant] == [("globex", 8.0), ("acme", 7.25)]
    assert [r["model"] for r in await ledger.spend("model", Filters(tenant="acme", since=start), 10, 0)] == [
        "claude-sonnet-4-5",
        "gpt-4o-mini",
    ]
    sessions = await ledger.spend("session", Filters(tenant="acme", since=start, session="s-1"), 10, 0)
    assert [(r["session"], r["cost_usd"]) for r in sessions] == [("s-1", 6.25)]
    days = await ledger.spend("day", Filters(tenant="acme"), 10, 0)
    assert sorted(r["day"] for r in days) == sorted(
        {datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d") for t in (start - 86400, start + 10)}
    )
    assert [r["key"] for r in await ledger.spend("key", Filters(status=500), 10, 0)] == ["k-2"]
    totals = await ledger.totals(month)
    assert totals["cost_usd"] == 15.25 and totals["requests"] == 4 and totals["saved_usd"] == 1.5
    assert totals["saved_usd_by_source"] == {"upstream": 0.5, "response_cache": 1.0}
    pages = [await ledger.spend("key", month, 1, offset) for offset in range(4)]
    assert [page[0]["key"] for page in pages[:3]] == ["g-1", "k-2", "k-1"] and pages[3] == []


async def test_export_reads_every_record_in_order_across_pages(ledger: Ledger) -> None:
    records = synthetic_month(EXPORT_PAGE * 2 + 17, seed=3)
    for record_ in records[: EXPORT_PAGE * 2]:
        record_["at"] = records[0]["at"]  # many at the same instant: the page boundary falls among them
    await ledger.backend.insert([to_row(r) for r in records])
    exported = [r async for r in ledger.records(Filters())]
    assert len(exported) == len(records) and len({r["id"] for r in exported}) == len(records)
    assert [(r["at"], r["id"]) for r in exported] == sorted((r["at"], r["id"]) for r in records)
    original = next(r for r in records if r["id"] == exported[-1]["id"])
    assert exported[-1] == {**original, "content": None, "day": utc_day(original["at"])}


async def test_records_past_their_retention_are_purged(ledger_url: str) -> None:
    ledger = await opened(ledger_url, retention_months=2)
    try:
        now = datetime(2026, 11, 15, tzinfo=UTC)
        kept_from = datetime(2026, 9, 1, tzinfo=UTC).timestamp()  # the current month and the 2 before it
        ledger.add(record(kept_from - 1))
        ledger.add(record(kept_from))
        await ledger.start()
        await ledger.writer.drain(5)
        assert await ledger.purge(now) == 1
        assert [r["at"] async for r in ledger.records(Filters())] == [kept_from]
    finally:
        await ledger.close()


async def test_a_failing_database_loses_records_counted_never_raises(ledger_url: str) -> None:
    metrics = GatewayMetrics()
    ledger = create_ledger(LedgerConfig(url=ledger_url, flush_ms=20, queue=3), metrics)
    assert ledger is not None and await ledger.open()
    await ledger.start()
    await ledger.backend.execute("DROP TABLE records")  # the database fails under the writer
    for at in range(5):
        ledger.add(record(float(at)))  # never raises, never waits
    await ledger.writer.drain(5)
    dropped = metrics.ledger_records_dropped
    assert dropped.labels("queue_full")._value.get() == 2
    assert dropped.labels("database")._value.get() == 3
    await ledger.close()


async def test_strings_a_caller_chose_never_lose_a_batch(ledger: Ledger) -> None:
    """A NUL (PostgreSQL's text refuses it) or a lone surrogate (not UTF-8) in a caller's model name or
    session would fail the whole batch, other tenants' records with it."""
    odd = record(1.0, model="evil\x00model", session="\ud800-session")
    await ledger.backend.insert([to_row(odd), to_row(record(2.0, tenant="globex"))])
    assert {r["tenant"] for r in await ledger.spend("tenant", Filters(), 10, 0)} == {"acme", "globex"}
    found = await ledger.spend("model", Filters(model="evil\x00model"), 10, 0)
    assert [r["requests"] for r in found] == [1]
