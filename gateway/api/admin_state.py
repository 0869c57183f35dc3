"""GET /admin/state/stats: which state backend this replica uses, and whether it answers.

Replicas behind a load balancer must share one Redis for sessions, limits and caches to hold across
them; this endpoint lets an operator (and the deployment tests) check that from each replica.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from gateway.api.admin import require_admin
from gateway.services import Services
from gateway.state import StateStore

# Counting stops here: the count is a sanity check, not an inventory.
MAX_COUNTED_KEYS = 10_000

router = APIRouter(prefix="/admin/state", tags=["admin"])


async def count_keys(store: StateStore, prefix: str) -> tuple[int, bool]:
    """Keys under prefix, up to MAX_COUNTED_KEYS; the flag says whether counting stopped early."""
    count = 0
    async for _ in store.scan(prefix):
        count += 1
        if count >= MAX_COUNTED_KEYS:
            return count, True
    return count, False


@router.get("/stats")
async def state_stats(
    services: Annotated[Services, Depends(require_admin)],
    prefix: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> dict[str, Any]:
    """Backend and health; with `prefix` (e.g. a tenant's 'acme:'), also how many keys lie under it.

    The count goes through the store like any request does, so a Redis outage shows here as the
    per-replica fallback backend (and in cachegate_state_fallbacks_total).
    """
    store = services.store
    stats: dict[str, Any] = {}
    if prefix is not None:
        stats["prefix"] = prefix
        stats["keys"], stats["keys_truncated"] = await count_keys(store, prefix)
    healthy = await store.ping()
    return {"backend": store.backend, "shared": store.backend == "redis", "healthy": healthy, **stats}
