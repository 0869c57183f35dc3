"""Managed keys over the admin API (admin key): issue, list, read, change, rotate and revoke at runtime.
Secrets are returned once (create, rotate); listings never hold them nor their hashes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from pydantic import AfterValidator, BaseModel, Field

from gateway.api.admin import AdminServices
from gateway.config.limits import Limits
from gateway.config.policy import PolicyConfig, effective_policy
from gateway.managed_keys import KeyConflict, KeyRecord, ManagedKeys
from gateway.services import Services
from gateway.state import StateUnavailable


def _valid_policy(policy: dict[str, Any]) -> dict[str, Any]:
    """Policy overrides must make a valid policy (checked on the defaults; a 422 names the field)."""
    effective_policy(PolicyConfig(), policy)
    return policy


class NewKey(BaseModel):
    tenant: str
    name: str = Field(default="", max_length=200)
    allowed_models: list[str] | None = None
    limits: Limits = Limits()
    policy: Annotated[dict[str, Any], AfterValidator(_valid_policy)] = Field(default_factory=dict)
    expires_at: float | None = None


class KeyChange(BaseModel):
    name: str | None = Field(default=None, max_length=200)
    allowed_models: list[str] | None = None
    limits: Limits | None = None
    policy: Annotated[dict[str, Any], AfterValidator(_valid_policy)] | None = None
    expires_at: float | None = None


async def _store_needed() -> AsyncIterator[None]:
    """Key records are written to and read from Redis itself: while it is down, say so (503). A record
    that kept changing under a change: 409 (the change was not made)."""
    try:
        yield
    except StateUnavailable as exc:
        raise HTTPException(status_code=503, detail="the state store is unavailable; try again later") from exc
    except KeyConflict as exc:
        raise HTTPException(status_code=409, detail="the key changed meanwhile; read it and try again") from exc


router = APIRouter(prefix="/admin/keys", tags=["admin"], dependencies=[Depends(_store_needed)])


def _missing(key_id: str) -> HTTPException:
    return HTTPException(status_code=404, detail=f"no managed key {key_id!r}")


def _found(record: KeyRecord | None, key_id: str) -> KeyRecord:
    if record is None:
        raise _missing(key_id)
    return record


async def _record(keys: ManagedKeys, key_id: str) -> KeyRecord:
    return _found((await keys.records()).get(key_id), key_id)


@router.post("", status_code=201)
async def create_key(new: NewKey, services: Services = AdminServices) -> dict[str, Any]:
    keys = services.managed_keys
    if new.tenant not in keys.tenants:
        raise HTTPException(status_code=400, detail=f"unknown tenant {new.tenant!r}")
    record, secret = await keys.create(**new.model_dump())
    return {**record.public(), "secret": secret}


@router.get("")
async def list_keys(tenant: str | None = None, services: Services = AdminServices) -> dict[str, Any]:
    keys = services.managed_keys
    records, used = (await keys.records()).values(), await keys.last_used()
    ordered = sorted(records, key=lambda r: r.created_at)
    return {"keys": [r.public(used.get(r.id)) for r in ordered if tenant in (None, r.tenant)]}


@router.get("/{key_id}")
async def get_key(key_id: str, services: Services = AdminServices) -> dict[str, Any]:
    keys = services.managed_keys
    return (await _record(keys, key_id)).public((await keys.last_used()).get(key_id))


@router.patch("/{key_id}")
async def change_key(key_id: str, change: KeyChange, services: Services = AdminServices) -> dict[str, Any]:
    fields = change.model_dump(exclude_unset=True)
    changed = await services.managed_keys.change(key_id, lambda record: record.model_copy(update=fields))
    return _found(changed, key_id).public()


@router.post("/{key_id}/rotate")
async def rotate_key(key_id: str, services: Services = AdminServices) -> dict[str, Any]:
    rotated = await services.managed_keys.rotate(key_id)
    if rotated is None:
        raise _missing(key_id)
    record, secret = rotated
    return {**record.public(), "secret": secret}


@router.delete("/{key_id}")
async def revoke_key(key_id: str, services: Services = AdminServices) -> dict[str, Any]:
    revoked = await services.managed_keys.change(key_id, lambda record: record.model_copy(update={"revoked": True}))
    return _found(revoked, key_id).public()
