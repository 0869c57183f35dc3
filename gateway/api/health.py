"""Liveness, readiness, metrics and the model list."""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.services import Services


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    services: Services = request.app.state.services
    checks: dict[str, str] = {}
    if services.settings.redis_url:
        checks["redis"] = "ok" if await services.store.ping() else "unreachable"
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "degraded", "checks": checks}, status_code=200 if ready else 503
    )


async def metrics(request: Request) -> Response:
    services: Services = request.app.state.services
    return Response(generate_latest(services.metrics.registry), media_type=CONTENT_TYPE_LATEST)


async def models(request: Request) -> Response:
    services: Services = request.app.state.services
    created = int(time.time())
    data = [
        {
            "id": m.name,
            "object": "model",
            "created": created,
            "owned_by": m.provider,
            "type": "model",
            "display_name": m.name,
            "created_at": "1970-01-01T00:00:00Z",
        }
        for m in services.settings.models
    ]
    return JSONResponse(
        {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }
    )
