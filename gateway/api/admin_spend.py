"""Spend from the ledger over the admin API (admin key; docs/ledger.md): GET /admin/spend groups the
requests by tenant, key, model, session or day, with filters and paging; GET /admin/spend/export streams
the records themselves as CSV or JSON lines."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import orjson
from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import StreamingResponse

from gateway.api.admin import AdminServices
from gateway.governance.budgets import window_start
from gateway.ledger import GROUPS, Filters, Ledger
from gateway.ledger.backend import LedgerUnavailable
from gateway.ledger.queries import SPEND_FIELDS, summed
from gateway.ledger.rows import COLUMNS, RENAMED, TOKEN_COLUMNS
from gateway.services import Services

router = APIRouter(prefix="/admin/spend", tags=["admin"])
Group = Literal["tenant", "key", "model", "session", "day"]
assert set(get_args(Group)) == set(GROUPS)
# The CSV's columns: the record's own names, one column per token kind.
CSV_FIELDS = [RENAMED.get(c, c) for c in COLUMNS if c not in TOKEN_COLUMNS.values()] + [
    f"tokens_{kind}" for kind in TOKEN_COLUMNS
]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run such a cell: callers chose some values


def _ledger(services: Services) -> Ledger:
    if services.ledger is None:
        raise HTTPException(status_code=404, detail="the ledger is turned off (ledger.enabled: false)")
    return services.ledger


def _filters(
    tenant: str | None, key: str | None, model: str | None, session: str | None, status: int | None,
    since: float | None, until: float | None,
) -> Filters:  # fmt: skip
    """The filters; without `since`, the current UTC month."""
    if since is None:
        start = window_start("month", datetime.now(UTC))
        since = start.timestamp() if start else None
    return Filters(tenant, key, model, session, status, since, until)


def _unavailable() -> HTTPException:
    return HTTPException(status_code=503, detail="the ledger's database did not answer; try again shortly")


async def month_totals(services: Services) -> dict[str, Any] | None:
    """This UTC month's totals from the ledger (every replica's, kept across restarts); None: no ledger."""
    if services.ledger is None:
        return None
    filters = _filters(None, None, None, None, None, None, None)
    try:
        return {"since": filters.since, **await services.ledger.totals(filters)}
    except LedgerUnavailable:
        return None


@router.get("")
async def spend(
    by: Group = "tenant",
    tenant: str | None = None,
    key: str | None = None,
    model: str | None = None,
    session: str | None = None,
    status: int | None = Query(default=None, ge=100, le=599),
    since: float | None = None,
    until: float | None = None,
    limit: int = Query(default=100, ge=1, le=1000),
    offset: int = Query(default=0, ge=0, le=10_000_000),
    services: Services = AdminServices,
) -> dict[str, Any]:
    ledger, filters = _ledger(services), _filters(tenant, key, model, session, status, since, until)
    try:
        rows = await ledger.spend(by, filters, limit + 1, offset)  # one more: is there a next page?
        more = len(rows) > limit
        if offset == 0 and not more:  # every group on this page: their sum is the total, no second query
            totals = summed([{name: row[name] for name in SPEND_FIELDS} for row in rows])
        else:
            totals = {name: value for name, value in (await ledger.totals(filters)).items() if name in SPEND_FIELDS}
    except LedgerUnavailable:
        raise _unavailable() from None
    return {
        "by": by,
        "since": filters.since,
        "until": filters.until,
        "rows": rows[:limit],
        "next_offset": offset + limit if more else None,
        "totals": totals,
    }


def _csv_line(record: dict[str, Any]) -> str:
    flat = {**record, **{f"tokens_{kind}": count for kind, count in record["tokens"].items()}}
    flat["stages_ms"] = orjson.dumps(record["stages_ms"]).decode()
    flat["content"] = orjson.dumps(record["content"]).decode() if record["content"] is not None else None
    cells = []
    for field in CSV_FIELDS:
        value = flat[field]
        text = "" if value is None else str(value)
        cells.append("'" + text if text.startswith(FORMULA_STARTS) and not isinstance(value, float | int) else text)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


async def _lines(ledger: Ledger, filters: Filters, fmt: str) -> AsyncIterator[bytes]:
    if fmt == "csv":
        yield (",".join(CSV_FIELDS) + "\n").encode()
    async for record in ledger.records(filters):
        yield _csv_line(record).encode() if fmt == "csv" else orjson.dumps(record) + b"\n"


@router.get("/export")
async def export(
    format: Literal["csv", "jsonl"] = "jsonl",
    tenant: str | None = None,
    key: str | None = None,
    model: str | None = None,
    session: str | None = None,
    status: int | None = Query(default=None, ge=100, le=599),
    since: float | None = None,
    until: float | None = None,
    services: Services = AdminServices,
) -> StreamingResponse:
    ledger, filters = _ledger(services), _filters(tenant, key, model, session, status, since, until)
    try:
        await ledger.totals(Filters(since=0.0, until=0.0))  # answers at all: else a 503 now, not a cut stream
    except LedgerUnavailable:
        raise _unavailable() from None
    media = "text/csv; charset=utf-8" if format == "csv" else "application/x-ndjson"
    disposition = f'attachment; filename="cachegate-records.{format}"'
    return StreamingResponse(
        _lines(ledger, filters, format), media_type=media, headers={"content-disposition": disposition}
    )
