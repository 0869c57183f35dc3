"""Managed keys: virtual keys issued, changed, rotated and revoked at runtime through the admin API
(docs/governance.md, "Keys"), beside the keys of the config file.

Records live in the state store (one hash of JSON records, and a version counter bumped on every change),
changed by compare-and-set (a change made meanwhile, such as a revoke or a rotation, is read again and the
change applied over it: no change undoes another),
read from Redis itself, never from the per-replica fallback a Redis outage switches other state to (an
empty fallback would revoke every key);
each replica keeps all of them in memory (authentication never waits on the store) and reloads them when
the version moves, polled every `POLL_S`, so a change is in force on every replica within a second. A
store that cannot be read keeps the keys last loaded. Secrets are shown once, at creation and rotation,
and stored only as hashes.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from gateway.auth import KeyIdentity, KeyRing
from gateway.config import TenantConfig, hash_key
from gateway.config.limits import Limits
from gateway.logs import log_failure
from gateway.state.base import StateStore, StateUnavailable

log = logging.getLogger("cachegate.keys")
RECORDS, VERSION, LAST_USED = "managedkeys:records", "managedkeys:version", "managedkeys:lastused"
POLL_S = 0.5
LAST_USED_EVERY_S = 60.0  # a key's last use is written at most this often per replica
CHANGE_TRIES = 10  # compare-and-set rounds before a change gives up (KeyConflict)


class KeyConflict(Exception):
    """The key's record kept changing under a change (CHANGE_TRIES times in a row)."""


class KeyRecord(BaseModel):
    id: str
    tenant: str
    name: str = ""
    secret_hash: str
    allowed_models: list[str] | None = None  # narrows the tenant's
    limits: Limits = Field(default_factory=Limits)
    policy: dict[str, Any] = Field(default_factory=dict)  # overrides merged over the tenant's (PolicyConfig)
    expires_at: float | None = None  # Unix time
    created_at: float = Field(default_factory=time.time)
    revoked: bool = False

    def public(self, last_used_at: float | None = None) -> dict[str, Any]:
        """What the admin API shows: everything but the secret's hash, and when the key was last used."""
        return {**self.model_dump(exclude={"secret_hash"}), "last_used_at": last_used_at}


def new_secret() -> str:
    return "sk-cg-" + secrets.token_urlsafe(32)


def _narrowed(tenant: TenantConfig, record: KeyRecord) -> TenantConfig:
    """The tenant as this key may use it: the key's models, within the tenant's."""
    models = record.allowed_models
    if models is None:
        return tenant
    if tenant.allowed_models is not None:
        models = [m for m in models if m in tenant.allowed_models]
    return tenant.model_copy(update={"allowed_models": models})


class ManagedKeys:
    def __init__(self, store: StateStore, ring: KeyRing, tenants: list[TenantConfig]) -> None:
        self.store, self.ring = store, ring
        self.tenants = {tenant.name: tenant for tenant in tenants}
        self.version: bytes | None = None
        self._used: dict[str, float] = {}  # key id -> when this replica last recorded its use
        self._writes: set[asyncio.Task[None]] = set()

    async def records(self) -> dict[str, KeyRecord]:
        raw = await self.store.hgetall(RECORDS)
        return {ident: KeyRecord.model_validate_json(value) for ident, value in raw.items()}

    async def refresh(self) -> None:
        """Reload the records when their version moved; a store failure keeps the keys in force."""
        try:
            version = await self.store.get(VERSION)
            if version == self.version:
                return
            records = await self.records()
        except StateUnavailable:
            log.warning("managed keys: the state store is unavailable; keeping the keys last loaded")
            return
        loaded: dict[str, tuple[KeyIdentity, float | None]] = {}
        for record in records.values():
            tenant = self.tenants.get(record.tenant)
            if tenant is None or record.revoked:
                continue
            identity = KeyIdentity(
                record.id, _narrowed(tenant, record), record.name, record.limits, record.policy, managed=True
            )
            loaded[record.secret_hash] = (identity, record.expires_at)
        self.ring.managed = loaded
        self.version = version

    async def run(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:  # a bad record must not end the reloading for good
                log_failure(log, "managed keys: reloading failed; keeping the keys last loaded")
            await asyncio.sleep(POLL_S)

    def used(self, key_id: str) -> None:
        """Record a key's use, off the request path and at most every LAST_USED_EVERY_S per replica (a
        failed write only leaves the time older)."""
        now = time.time()
        if now - self._used.get(key_id, 0.0) < LAST_USED_EVERY_S:
            return
        self._used[key_id] = now
        task = asyncio.create_task(self._write_used(key_id, now))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write_used(self, key_id: str, at: float) -> None:
        try:
            await self.store.hset(LAST_USED, {key_id: repr(at).encode()})
        except StateUnavailable:
            self._used.pop(key_id, None)  # try again on the next use

    async def last_used(self) -> dict[str, float]:
        return {key_id: float(value) for key_id, value in (await self.store.hgetall(LAST_USED)).items()}

    async def _changed(self) -> None:
        await self.store.incr(VERSION)
        await self.refresh()

    async def create(self, tenant: str, **fields: Any) -> tuple[KeyRecord, str]:
        secret = new_secret()
        record = KeyRecord(id="key_" + uuid.uuid4().hex[:16], tenant=tenant, secret_hash=hash_key(secret), **fields)
        if not await self.store.hswap(RECORDS, record.id, None, record.model_dump_json().encode()):
            raise KeyConflict(record.id)  # a random id already taken: never in practice
        await self._changed()
        return record, secret

    async def change(self, key_id: str, update: Callable[[KeyRecord], KeyRecord]) -> KeyRecord | None:
        """`update` applied to the key's current record, written only if the record is still the one read
        (else read again: a revoke or a rotation made meanwhile is kept). None: no such key."""
        for _ in range(CHANGE_TRIES):
            current = (await self.store.hgetall(RECORDS)).get(key_id)
            if current is None:
                return None
            changed = update(KeyRecord.model_validate_json(current))
            if await self.store.hswap(RECORDS, key_id, current, changed.model_dump_json().encode()):
                await self._changed()
                return changed
        raise KeyConflict(key_id)

    async def rotate(self, key_id: str) -> tuple[KeyRecord, str] | None:
        """A new secret; the old one stops working at once (no grace period). None: no such key."""
        secret = new_secret()
        rotated = await self.change(key_id, lambda record: record.model_copy(update={"secret_hash": hash_key(secret)}))
        return (rotated, secret) if rotated is not None else None
