"""GET /v1/context/{handle}: the original of a compacted tool result or a write-ahead history dump.

Authenticated with the tenant's own key (Bearer or x-api-key); a tenant only ever sees its own handles
(the store keys carry the tenant, so another tenant's handle is simply not found).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from gateway.auth import presented_key
from gateway.compaction import CompactionMetrics, Originals
from gateway.compaction.retrieval import fetch
from gateway.services import Services

router = APIRouter(tags=["compaction"])


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status)


@router.get("/v1/context/{handle}", response_model=None)
async def fetch_context(handle: str, request: Request) -> dict[str, Any] | JSONResponse:
    services: Services = request.app.state.services
    tenant = services.keys.tenant_for(presented_key(request.headers))
    if tenant is None:
        return _error(401, "authentication_error", "A valid tenant API key is required.")
    found = await fetch(Originals(services.store), tenant.name, handle)
    metrics = services.extras.get("compaction")
    if isinstance(metrics, CompactionMetrics):
        metrics.retrieval("endpoint", found is not None)
    if found is None:
        return _error(404, "not_found_error", f"No stored context under '{handle}' for this key.")
    return found
