"""Admin endpoints of the response cache: purge by tenant / namespace / model, and a status summary."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel

from gateway.api.admin import require_admin
from gateway.response_cache import ResponseCache
from gateway.services import Services

router = APIRouter(prefix="/admin/cache", tags=["admin"])
Admin = Annotated[Services, Depends(require_admin)]


class PurgeRequest(BaseModel):
    """Fields left out select everything; `all` must be set to purge with no selector at all."""

    tenant: str | None = None
    namespace: str | None = None
    model: str | None = None
    all: bool = False


def cache_of(services: Services) -> ResponseCache:
    cache = services.extras.get("response_cache")
    if not isinstance(cache, ResponseCache):
        raise HTTPException(status_code=404, detail="the response cache stage is not in the pipeline")
    return cache


@router.post("/purge")
async def purge(request: PurgeRequest, services: Admin) -> dict[str, object]:
    if not (request.tenant or request.namespace or request.model or request.all):
        raise HTTPException(status_code=400, detail="name a tenant, namespace or model, or set all=true")
    deleted = await cache_of(services).purge(request.tenant, request.namespace, request.model)
    return {"deleted": deleted, **request.model_dump(exclude={"all"})}


@router.get("/status")
async def status(services: Admin) -> dict[str, object]:
    cache = cache_of(services)
    return {
        "backend": "redis" if cache.backend.shared else "memory",
        "indexed_semantic_entries": len(cache.index),
        "embedder": "ready" if cache.embedder_ready else "loading",
    }
