"""A month of synthetic request records in the shape gateway/request_log.py builds (for the ledger's
tests and bench/ledger_spend.py): tenants, keys, models and sessions drawn from fixed pools, a few
failures, spread from the start of the current UTC month to now."""

from __future__ import annotations

import random
import time
import uuid
from datetime import UTC, datetime
from typing import Any

TENANTS = [f"tenant-{i}" for i in range(5)]
MODELS = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash", "gpt-4.1-mini", "claude-haiku-4-5"]
STATUSES = [200] * 95 + [402, 403, 429, 500, 502]


def month_start(now: float) -> float:
    return datetime.fromtimestamp(now, UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()


def record(
    at: float, tenant: str = "acme", key: str | None = "k-1", model: str = "gpt-4o-mini", **fields: Any
) -> dict[str, Any]:
    """One record; `fields` override the defaults (session, status, cost_usd, saved_usd, tokens ...)."""
    return {
        "id": uuid.uuid4().hex,
        "at": at,
        "tenant": tenant,
        "key": key,
        "session": None,
        "model": model,
        "route": model,
        "provider": "openai",
        "api": "openai",
        "stream": False,
        "status": 200,
        "error": None,
        "error_code": None,
        "source": "upstream",
        "tokens": {"input": 100, "cache_read": 0, "cache_write": 0, "output": 20},
        "cost_usd": 0.001,
        "cost_basis": "list",
        "side_cost_usd": 0.0,
        "saved_usd": 0.0,
        "cache": None,
        "prefix_break": None,
        "guard": None,
        "compaction": None,
        "stages_ms": {"auth": 0.1, "upstream": 5.0},
        "upstream_ms": 5.0,
        "ttft_ms": None,
        "total_ms": 6.2,
        **fields,
    }


def synthetic_month(count: int, seed: int = 7, now: float | None = None) -> list[dict[str, Any]]:
    rng, now = random.Random(seed), now or time.time()
    start = month_start(now)
    records = []
    for _ in range(count):
        tenant = rng.choice(TENANTS)
        inputs, read, output = rng.randint(50, 4000), rng.choice([0, 0, 1024, 2048]), rng.randint(5, 800)
        records.append(
            record(
                rng.uniform(start, now),
                tenant=tenant,
                key=f"{tenant}-key-{rng.randrange(10)}",
                model=rng.choice(MODELS),
                session=f"session-{rng.randrange(2000)}",
                status=rng.choice(STATUSES),
                tokens={"input": inputs, "cache_read": read, "cache_write": 0, "output": output},
                cost_usd=round(inputs * 1.5e-7 + read * 7.5e-8 + output * 6e-7, 9),
                saved_usd=round(read * 7.5e-8, 9),
            )
        )
    return records
