"""/dashboard: a live page of the headline numbers and a session inspector (data behind the admin key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import HTMLResponse

from gateway.api.admin import AdminServices
from gateway.api.admin_budgets import budget_rows
from gateway.services import Services

PAGE = (Path(__file__).parent / "index.html").read_text(encoding="utf-8")

router = APIRouter()


@router.get("/dashboard", include_in_schema=False)
async def page() -> HTMLResponse:
    # The page holds no data; it asks for the admin key and fetches the data below with it.
    return HTMLResponse(PAGE, headers={"cache-control": "no-store"})


@router.get("/admin/dashboard/data")
async def data(services: Services = AdminServices) -> dict[str, Any]:
    return {
        **services.live.snapshot(),
        "sessions": services.sessions.list()[:50],
        "budgets": await budget_rows(services),
        "state_backend": services.store.backend,
    }


@router.get("/admin/dashboard/sessions/{tenant}/{session}")
async def session_detail(tenant: str, session: str, services: Services = AdminServices) -> dict[str, Any]:
    found = services.sessions.get(tenant, session)
    if found is None:
        raise HTTPException(status_code=404, detail="session not seen by this replica")
    return found
