"""A revoke or a rotation racing a change of the same managed key is never undone (issue 26, finding 7: a
PATCH that read the record before a revoke wrote it back whole, un-revoking the key)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.gateway_harness import ADMIN_HEADERS, RunningGateway, gateway_settings, running_gateway
from tests.redis_target import empty_redis

RACES = 20


@pytest.fixture(scope="module")
def gateway() -> Iterator[RunningGateway]:
    settings = gateway_settings(redis_timeout_s=5.0)  # a loaded machine's slow moments are not this test's
    with empty_redis() as url, running_gateway(**settings, redis_url=url) as gw:
        yield gw


async def status(client: httpx.AsyncClient, secret: str) -> int:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text hi]]"}]}
    response = await client.post("/v1/chat/completions", json=body, headers={"authorization": f"Bearer {secret}"})
    return response.status_code


async def race(client: httpx.AsyncClient, action: Any, key_id: str) -> list[httpx.Response]:
    """`action` on the key while PATCHes of the same key run just before and after it; its answer last."""
    renames = [client.patch(f"/admin/keys/{key_id}", json={"name": f"renamed-{i}"}) for i in range(4)]
    answers = await asyncio.gather(*renames[:2], action, *renames[2:])
    return [*answers[:2], *answers[3:], answers[2]]


async def issue(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.post("/admin/keys", json={"tenant": "acme", "name": "raced"})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_revokes_and_rotations_racing_patches_hold(gateway: RunningGateway) -> None:
    async with httpx.AsyncClient(base_url=gateway.url, headers=ADMIN_HEADERS, timeout=30) as admin:
        revoked = [await issue(admin) for _ in range(RACES)]
        rotated = [await issue(admin) for _ in range(RACES)]
        answers = await asyncio.gather(
            *[race(admin, admin.delete(f"/admin/keys/{key['id']}"), key["id"]) for key in revoked],
            *[race(admin, admin.post(f"/admin/keys/{key['id']}/rotate"), key["id"]) for key in rotated],
        )
        for responses in answers:  # every change either made over the others or refused: never a 5xx
            assert all(r.status_code in (200, 409) for r in responses), [(r.status_code, r.text) for r in responses]
            assert responses[-1].status_code == 200  # the revoke or the rotation itself
        await asyncio.sleep(0.6)  # every replica reloads within POLL_S
        async with httpx.AsyncClient(base_url=gateway.url, timeout=30) as caller:
            still_working = [key["id"] for key in revoked + rotated if await status(caller, key["secret"]) != 401]
            new_secrets = [responses[-1].json()["secret"] for responses in answers[RACES:]]
            refused_new = [secret for secret in new_secrets if await status(caller, secret) != 200]
        records = {key["id"]: key for key in (await admin.get("/admin/keys")).json()["keys"]}
    assert still_working == [], f"{len(still_working)} revoked or rotated-away secrets still work"
    assert refused_new == []
    assert all(records[key["id"]]["revoked"] for key in revoked)
