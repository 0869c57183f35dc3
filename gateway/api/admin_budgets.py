"""Budgets over the admin API (admin key): every tenant's and managed key's budgets, spent in their
current windows, from the counters all replicas share (docs/governance.md, "Budgets")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from gateway.api.admin import AdminServices
from gateway.governance.budgets import budget_scopes, lines, report, utc_now
from gateway.services import Services
from gateway.state import StateUnavailable

router = APIRouter(prefix="/admin/budgets", tags=["admin"])


async def budget_rows(services: Services) -> list[dict[str, Any]]:
    """Tenant and key budgets (session budgets are per session: see the session's own view)."""
    try:
        records = list((await services.managed_keys.records()).values())
    except StateUnavailable:
        records = []  # the tenants' budgets still show
    scopes, now, rows = budget_scopes(services.settings.tenants, records), utc_now(), []
    for tenant, tenant_scopes in scopes.items():
        rows += [{"tenant": tenant, **row} for row in await report(services.store, lines(tenant, tenant_scopes), now)]
    return rows


@router.get("")
async def list_budgets(services: Services = AdminServices) -> dict[str, Any]:
    return {"budgets": await budget_rows(services)}
