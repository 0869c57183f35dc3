"""/dashboard: a live page of the headline numbers, spend against budget and the session explorer (data
behind the admin key; sessions from the request records every replica shares)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse

from gateway.api.admin import AdminServices
from gateway.api.admin_budgets import budget_rows
from gateway.api.admin_spend import month_totals
from gateway.api.requests_log import record_tenants
from gateway.dashboard.live import headline
from gateway.dashboard.pools import pool_rows
from gateway.dashboard.series import RANGES_S, series
from gateway.dashboard.sessions import session_view, sessions
from gateway.dashboard.window import window
from gateway.ledger.backend import LedgerUnavailable
from gateway.metrics_summary import summarize_registry
from gateway.request_log import Query
from gateway.services import Services

PAGE = (Path(__file__).parent / "index.html").read_text(encoding="utf-8")

router = APIRouter()
DASHBOARD_SCAN = 5000  # newest records read per tenant for a refresh: beyond, Grafana is the tool


@router.get("/dashboard", include_in_schema=False)
async def page() -> HTMLResponse:
    # The page holds no data; it asks for the admin key and fetches the data below with it.
    return HTMLResponse(PAGE, headers={"cache-control": "no-store"})


@router.get("/admin/dashboard/data")
async def data(range_s: int = 900, services: Services = AdminServices) -> dict[str, Any]:
    if range_s not in RANGES_S:
        raise HTTPException(status_code=400, detail=f"range_s: one of {list(RANGES_S)}")
    now, scan = time.time(), min(services.settings.request_log.per_tenant, DASHBOARD_SCAN)
    records = await services.requests.recent(record_tenants(services), Query(since=now - range_s), scan, scan)
    points = series(records, now, range_s)
    found = await _window(services, now, range_s)
    for latencies, point in zip(points, found["points"] if found else [], strict=False):
        point["p50_ms"], point["p95_ms"] = latencies["p50_ms"], latencies["p95_ms"]  # percentiles: from the records
    registry = services.metrics.exposition()
    return {
        "now": headline(summarize_registry(registry)),
        "series": points,
        "window": found,
        "requests": records[:25],
        "sessions": sessions(records),
        "budgets": await budget_rows(services),
        "month": await month_totals(services),  # from the ledger: survives restarts and Redis flushes
        "state_backend": services.store.backend,
        "pools": await pool_rows(services.router.pools, registry),  # deployments of pools of several
    }


async def _window(services: Services, now: float, range_s: int) -> dict[str, Any] | None:
    """The window's cards and charts from the ledger; None without one (the page falls back to the records
    and this replica's counters)."""
    if services.ledger is None:
        return None
    try:
        return await window(services.ledger, now, range_s)
    except LedgerUnavailable:
        return None


@router.get("/admin/dashboard/sessions/{tenant}/{session:path}")
async def session_detail(tenant: str, session: str, services: Services = AdminServices) -> dict[str, Any]:
    records = await services.requests.recent([tenant], Query(session=session), limit=500)
    found = session_view(tenant, session, records)
    if found is None:
        raise HTTPException(status_code=404, detail="no request of this session in the request records")
    return found
