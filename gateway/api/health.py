"""Liveness, readiness, metrics (metrics token or admin key) and the model list (tenant key)."""

from __future__ import annotations

import hmac
import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.api.errors import error_response
from gateway.auth import presented_key
from gateway.config import hash_key
from gateway.errors import ErrorKind, GatewayError
from gateway.exposure import is_loopback
from gateway.services import Services
from gateway.wire import ANTHROPIC, OPENAI


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


def may_read_metrics(services: Services, key: str | None) -> bool:
    """/metrics shows every tenant's traffic and spend: a metrics token or an admin key reads it. Open
    only on a loopback bind with no token configured (development); `cachegate serve` refuses a wider
    bind without a token (gateway/exposure.py)."""
    settings = services.settings
    if not settings.metrics_tokens and is_loopback(settings.host):
        return True
    if key is None:
        return False
    digest = hash_key(key)
    return services.keys.is_admin(key) or any(hmac.compare_digest(digest, t) for t in settings.metrics_tokens)


async def metrics(request: Request) -> Response:
    services: Services = request.app.state.services
    if not may_read_metrics(services, presented_key(request.headers)):
        return JSONResponse(
            {"error": {"type": "authentication_error", "message": "a metrics token or an admin key is required"}},
            status_code=401,
            headers={"www-authenticate": "Bearer"},
        )
    return Response(generate_latest(services.metrics.exposition()), media_type=CONTENT_TYPE_LATEST)


async def models(request: Request) -> Response:
    """The models the caller's tenant may use, in OpenAI's shape plus Anthropic's fields."""
    services: Services = request.app.state.services
    wire = ANTHROPIC if "anthropic-version" in request.headers else OPENAI
    key = presented_key(request.headers)
    tenant = services.keys.tenant_for(key)
    if tenant is None:
        message = "Invalid API key." if key else "Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key'."
        error = GatewayError(ErrorKind.AUTHENTICATION, message, code="invalid_api_key" if key else "missing_api_key")
        return error_response(wire, error, services.metrics)
    allowed = tenant.allowed_models
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
        for m in services.settings.routes
        if allowed is None or m.name in allowed
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
