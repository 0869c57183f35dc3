"""The ledger's month query: a month of request records (100,000 by default) in SQLite and in PostgreSQL,
then GET /admin/spend's queries timed on each (spend by key, the issue's goal: under 1 s; also by tenant,
model, session and day, and one tenant's keys), and the writer's insert rate.

    python -m bench.ledger_spend [--data FILE] [--records N] [--postgres URL] [--out DIR]

--data: a JSONL file of records (gateway/request_log.py's shape); written from tests/ledger/month.py's
synthetic month when it does not exist. Without --postgres, a private server is started
(tests/postgres_target.py; needs Debian's postgresql package)."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson

from gateway.config.ledger import LedgerConfig
from gateway.ledger import Filters, Ledger, create_ledger
from gateway.ledger.rows import to_row
from gateway.metrics import GatewayMetrics
from tests.ledger.month import month_start, synthetic_month
from tests.postgres_target import fresh_database, postgres_server

RESULTS = Path(__file__).parent / "results"
DATA = Path(tempfile.gettempdir()) / "cachegate-ledger-month.jsonl"  # ~70 MB: not in the repository
LOAD_BATCH = 500  # the writer's default batch
RUNS = 10
QUERIES = [("key", {}), ("tenant", {}), ("model", {}), ("session", {}), ("day", {}), ("key", {"tenant": "tenant-0"})]


def load_records(path: Path, count: int) -> list[dict[str, Any]]:
    if not path.exists():
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in synthetic_month(count)))
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def measure(url: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    ledger: Ledger | None = create_ledger(LedgerConfig(url=url), GatewayMetrics())
    assert ledger is not None and await ledger.open()
    try:
        rows = [to_row(r) for r in records]
        started = time.perf_counter()
        for at in range(0, len(rows), LOAD_BATCH):
            await ledger.backend.insert(rows[at : at + LOAD_BATCH])
        load_s = time.perf_counter() - started
        since = month_start(max(r["at"] for r in records))
        timings = {}
        for group, filters in QUERIES:
            name = f"spend by {group}" + "".join(f", {k}={v}" for k, v in filters.items())
            runs = []
            for _ in range(RUNS):
                started = time.perf_counter()
                await ledger.spend(group, Filters(since=since, **filters), 100, 0)
                runs.append(time.perf_counter() - started)
            timings[name] = {"median_ms": statistics.median(runs) * 1000, "max_ms": max(runs) * 1000}
        runs = []
        for _ in range(RUNS):  # the dashboard's month: totals and savings by source
            started = time.perf_counter()
            await ledger.totals(Filters(since=since))
            runs.append(time.perf_counter() - started)
        timings["month totals"] = {"median_ms": statistics.median(runs) * 1000, "max_ms": max(runs) * 1000}
        return {"records": len(rows), "insert_records_per_s": len(rows) / load_s, "queries": timings}
    finally:
        await ledger.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="records (JSONL)")
    parser.add_argument("--records", type=int, default=100_000, help="records to generate when --data is missing")
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a private server)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for ledger_spend.json")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    records = load_records(args.data, args.records)
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        server = args.postgres or stack.enter_context(postgres_server())
        report = {
            "sqlite": asyncio.run(measure(f"sqlite:///{Path(folder) / 'ledger.sqlite3'}", records)),
            "postgres": asyncio.run(measure(fresh_database(server) if not args.postgres else server, records)),
        }
    (args.out / "ledger_spend.json").write_text(json.dumps(report, indent=2))
    for backend, result in report.items():
        print(f"{backend}: {result['records']:,} records, {result['insert_records_per_s']:,.0f} inserted/s")
        for name, timing in result["queries"].items():
            print(f"  {name:<30} median {timing['median_ms']:8.1f} ms   max {timing['max_ms']:8.1f} ms")


if __name__ == "__main__":
    main()
