"""Simulator-only endpoints: stats, reset, fault queue, recent requests, models, health."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gateway.sim.settings import FaultKind
from gateway.sim.state import SimState


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


async def stats(request: Request) -> Response:
    return JSONResponse(_state(request).stats.snapshot())


async def recent_requests(request: Request) -> Response:
    """The last request bodies that reached the provider (?limit=N, default 20)."""
    limit = int(request.query_params.get("limit", "20"))
    return JSONResponse({"requests": _state(request).stats.recent(limit)})


async def reset(request: Request) -> Response:
    _state(request).reset()
    return JSONResponse({"status": "reset"})


async def queue_faults(request: Request) -> Response:
    """Body {"faults": ["429", "timeout", ...], "model": optional}: the next requests fail in order."""
    body = await request.json()
    try:
        faults = [FaultKind(fault) for fault in body.get("faults", [])]
    except ValueError as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    _state(request).faults.enqueue(faults, body.get("model"))
    return JSONResponse({"queued": [fault.value for fault in faults]})
