"""Loop-guard admin: inspect a session's steps and decisions, reset it or lift its block.

Sessions are named by tenant and session id (query parameters: ids may contain any character).
- GET  /admin/guard/session?tenant=&session=          counters, status, strikes, decisions, last steps
- POST /admin/guard/session/unblock?tenant=&session=  forget the strikes (lifts a BLOCK; counters stay)
- POST /admin/guard/session/reset?tenant=&session=    forget everything (counters, status, strikes)
- GET  /admin/guard/sessions?tenant=                  session ids with guard state (up to 1000)
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query

from gateway.api.admin import require_admin
from gateway.guard.state import GuardSessions, session_prefix, tenant_prefix
from gateway.services import Services

MAX_LISTED = 1000

router = APIRouter(prefix="/admin/guard", tags=["admin"])
Tenant = Annotated[str, Query(min_length=1, max_length=200)]
Session = Annotated[str, Query(min_length=1, max_length=200)]


def guard_sessions(services: Annotated[Services, Depends(require_admin)]) -> GuardSessions:
    sessions = services.extras.get("guard")
    if not isinstance(sessions, GuardSessions):
        raise HTTPException(status_code=404, detail="the loop guard is not in the pipeline")
    return sessions


Sessions = Annotated[GuardSessions, Depends(guard_sessions)]


@router.get("/session")
async def inspect_session(sessions: Sessions, tenant: Tenant, session: Session) -> dict[str, Any]:
    state = await sessions.inspect(session_prefix(tenant, session))
    if state is None:
        raise HTTPException(status_code=404, detail="no guard state for this session")
    return {"tenant": tenant, "session": session, **state}


@router.post("/session/unblock")
async def unblock_session(sessions: Sessions, tenant: Tenant, session: Session) -> dict[str, Any]:
    await sessions.unblock(session_prefix(tenant, session))
    return {"tenant": tenant, "session": session, "unblocked": True}


@router.post("/session/reset")
async def reset_session(sessions: Sessions, tenant: Tenant, session: Session) -> dict[str, Any]:
    await sessions.reset(session_prefix(tenant, session))
    return {"tenant": tenant, "session": session, "reset": True}


@router.get("/sessions")
async def list_sessions(sessions: Sessions, tenant: Tenant) -> dict[str, Any]:
    prefix = tenant_prefix(tenant)
    found: set[str] = set()
    async for key in sessions.store.scan(prefix):
        found.add(key[len(prefix) :].rsplit(":", 1)[0])
        if len(found) >= MAX_LISTED:
            break
    return {"tenant": tenant, "sessions": sorted(found), "truncated": len(found) >= MAX_LISTED}
