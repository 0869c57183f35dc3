"""Changing tenants, policy, models (with their prices) and model aliases while serving (admin key): checked,
then in force on every replica within a second (gateway/live/); a refused change answers 400 and changes
nothing."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from gateway.api.admin import AdminServices
from gateway.config.loading import ConfigError
from gateway.live.sync import ChangeConflict, LiveConfigSync
from gateway.state import StateUnavailable

MAX_DOCUMENT_BYTES = 1024 * 1024

router = APIRouter(prefix="/admin", tags=["admin"])


@router.put("/config", dependencies=[AdminServices])
async def change_config(request: Request) -> JSONResponse:
    """A YAML or JSON document of the sections to replace (tenants, policy, models, model_aliases); the
    sections it leaves out stay as they are."""
    body = await request.body()
    if len(body) > MAX_DOCUMENT_BYTES:
        raise HTTPException(status_code=413, detail=f"the document is over {MAX_DOCUMENT_BYTES} bytes")
    live: LiveConfigSync = request.app.state.live_config
    try:
        version = await live.publish(body.decode("utf-8", errors="replace"))
    except ConfigError as refused:
        error = {"type": "invalid_request_error", "message": str(refused)}
        return JSONResponse({"error": error}, status_code=400)
    except StateUnavailable as exc:
        detail = "the state store did not answer; the change may not be in force everywhere: check and retry"
        raise HTTPException(status_code=503, detail=detail) from exc
    except ChangeConflict as exc:
        raise HTTPException(status_code=409, detail="the config kept changing meanwhile; try again") from exc
    return JSONResponse({"version": version})
