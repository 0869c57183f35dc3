"""Simulator-only endpoints: stats, reset, fault queue, recent requests (admin key), models, health."""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from functools import wraps

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.auth import presented_key
from gateway.config import hash_key
from gateway.sim.settings import FaultKind
from gateway.sim.state import SimState

Endpoint = Callable[[Request], Awaitable[Response]]


def _state(request: Request) -> SimState:
    state: SimState = request.app.state.sim
    return state


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def list_models(request: Request) -> Response:
    """OpenAI's model list, or Anthropic's when the client sends `anthropic-version`."""
    models = _state(request).settings.models
    if "anthropic-version" in request.headers:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
            for m in models
            if m.startswith("claude")
        ]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return JSONResponse({"data": data, "has_more": False, "first_id": first, "last_id": last})
    created = int(time.time())
    listed = [{"id": m, "object": "model", "created": created, "owned_by": "sim"} for m in models]
    return JSONResponse({"object": "list", "data": listed})


def _is_admin(request: Request) -> bool:
    key = presented_key(request.headers)
    if not key:
        return False
    digest = hash_key(key)
    return any(hmac.compare_digest(digest, admin) for admin in _state(request).settings.admin_key_hashes)


def admin_only(endpoint: Endpoint) -> Endpoint:
    """The control endpoints read every caller's traffic and change how their calls fail: they need an
    admin key, and with none configured nobody may use them (403)."""

    @wraps(endpoint)
    async def guarded(request: Request) -> Response:
        if not _state(request).settings.admin_key_hashes:
            return JSONResponse({"error": "simulator controls are disabled: no admin key configured"}, 403)
        if not _is_admin(request):
            return JSONResponse({"error": "admin key required"}, 401, headers={"www-authenticate": "Bearer"})
        return await endpoint(request)

    return guarded


@admin_only
async def stats(request: Request) -> Response:
    return JSONResponse(_state(request).stats.snapshot())


@admin_only
async def recent_requests(request: Request) -> Response:
    """The last request bodies that reached the provider (?limit=N, default 20); empty unless the
    simulator runs with record_requests."""
    try:
        limit = int(request.query_params.get("limit", "20"))
    except ValueError:
        return JSONResponse({"error": "limit must be an integer"}, status_code=400)
    return JSONResponse({"requests": _state(request).stats.recent(limit)})


@admin_only
async def reset(request: Request) -> Response:
    _state(request).reset()
    return JSONResponse({"status": "reset"})


@admin_only
async def queue_faults(request: Request) -> Response:
    """Body {"faults": ["429", "timeout", ...], "model": optional}: the next requests fail in order."""
    body = await request.json()
    try:
        faults = [FaultKind(fault) for fault in body.get("faults", [])]
    except ValueError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    _state(request).faults.enqueue(faults, body.get("model"))
    return JSONResponse({"queued": [fault.value for fault in faults]})
