"""Admin endpoints (admin key required). Stages add their own routers beside this one."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request

from gateway.auth import presented_key
from gateway.services import Services


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def require_admin(request: Request) -> Services:
    services = services_of(request)
    if not services.keys.is_admin(presented_key(request.headers)):
        raise HTTPException(status_code=401, detail="admin key required")
    return services


router = APIRouter(prefix="/admin", tags=["admin"])
AdminServices = Depends(require_admin)


@router.get("/config")
async def config_summary(services: Services = AdminServices) -> dict[str, object]:
    """The routing and policy in force, without keys or key hashes."""
    settings = services.settings
    return {
        "models": [m.model_dump(exclude={"api_key_env"}) for m in settings.models],
        "tenants": [{"name": t.name, "keys": len(t.keys), "policy": t.policy} for t in settings.tenants],
        "policy": settings.policy.model_dump(),
        "state_backend": services.store.backend,
    }
