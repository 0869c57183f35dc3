"""Request records over HTTP: GET /v1/requests/{id} with the tenant's own key (the id is the
`x-request-id` of every answer), GET /admin/requests for the admin's queries (gateway/request_log.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request

from gateway.api.admin import AdminServices
from gateway.auth import presented_key
from gateway.error_classes import ERROR_CLASSES, error_class
from gateway.request_log import Query as RecordQuery
from gateway.services import Services

router = APIRouter()
REQUEST_ID = re.compile(r"[0-9a-f]{32}")  # the gateway's own ids (uuid4 hex): anything else is unknown
SEARCHED = ("id", "tenant", "key", "session", "model", "route", "provider", "error", "error_code", "guard")


@dataclass(frozen=True, slots=True)
class SearchQuery(RecordQuery):
    """The record filters, an error class (gateway/error_classes.py) and a text one of the SEARCHED fields
    holds, in any case ("": any)."""

    error_class: str | None = None
    text: str = ""

    def matches(self, record: dict[str, Any]) -> bool:
        if not RecordQuery.matches(self, record):
            return False
        if self.error_class is not None and self.error_class != error_class(
            record["status"], record.get("error"), record.get("error_code")
        ):
            return False
        return not self.text or any(self.text in str(record.get(name) or "").lower() for name in SEARCHED)


def record_tenants(services: Services) -> list[str]:
    """Whose records there are: every tenant's, and "unknown" (requests refused before authentication)."""
    return [tenant.name for tenant in services.settings.tenants] + ["unknown"]


@router.get("/v1/requests/{request_id}")
async def own_request(request_id: str, request: Request) -> dict[str, Any]:
    services: Services = request.app.state.services
    key = presented_key(request.headers)
    identity = services.keys.identify(key) if key else None
    if identity is None:
        raise HTTPException(status_code=401, detail="a tenant key is needed: the record of one of its requests")
    record = await services.requests.get(identity.tenant.name, request_id) if REQUEST_ID.fullmatch(request_id) else None
    if record is None:  # unknown, expired, or another tenant's: the same answer
        raise HTTPException(status_code=404, detail=f"no record of request {request_id[:64]!r} for this key's tenant")
    return record


@router.get("/admin/requests")
async def query_requests(
    tenant: str | None = None,
    key: str | None = None,
    session: str | None = None,
    model: str | None = None,
    status: int | None = None,
    guard: str | None = None,
    since: float | None = None,
    until: float | None = None,
    error_class: str | None = Query(default=None, pattern="^(" + "|".join(ERROR_CLASSES) + ")$"),
    q: str | None = Query(default=None, max_length=200),
    limit: int = Query(default=100, ge=1, le=1000),
    services: Services = AdminServices,
) -> dict[str, Any]:
    query = SearchQuery(tenant, key, session, model, status, guard, since, until, error_class, (q or "").lower())
    scan = services.settings.request_log.per_tenant
    return {"requests": await services.requests.recent(record_tenants(services), query, limit, scan)}


@router.get("/admin/requests/{request_id}")
async def any_request(request_id: str, services: Services = AdminServices) -> dict[str, Any]:
    for tenant in record_tenants(services) if REQUEST_ID.fullmatch(request_id) else []:
        record = await services.requests.get(tenant, request_id)
        if record is not None:
            return record
    raise HTTPException(status_code=404, detail=f"no record of request {request_id[:64]!r}")
