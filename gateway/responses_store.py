"""Stored Responses (the Responses API's `previous_response_id`, GET and DELETE /v1/responses/{id}).

The gateway keeps each response it returns on /v1/responses, unless the request said `store: false`,
with the conversation that led to it (input items, then the response's output items), per tenant in the
state store (Redis when configured) for RESPONSE_TTL_S. A request naming a `previous_response_id` gets
that conversation put before its own input; the provider is sent the full input and never the id, so
any provider serves it, none needs a store of its own, and one tenant can never name another's response
(keys are tenant-prefixed: another tenant's id is simply not found). As at OpenAI, the previous
response's `instructions` are not carried over.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.errors import ErrorKind, GatewayError
from gateway.ids import safe_id
from gateway.state import StateStore

RESPONSE_TTL_S = 24 * 3600.0  # bounds what a memory store holds; OpenAI keeps stored responses 30 days
KEY_PREFIX = "responses"


def response_key(tenant: str, response_id: str) -> str:
    return f"{KEY_PREFIX}:{tenant}:{safe_id(response_id)}"


def not_found(response_id: str, param: str | None = None) -> GatewayError:
    shown = safe_id(response_id)
    return GatewayError(ErrorKind.NOT_FOUND, f"Response with id '{shown}' not found.", param=param)


async def load(store: StateStore, tenant: str, response_id: str) -> dict[str, Any] | None:
    """{"response": the response object, "conversation": input + output items}, or None."""
    raw = await store.get(response_key(tenant, response_id))
    if raw is None:
        return None
    stored: dict[str, Any] = orjson.loads(raw)
    return stored


async def save(store: StateStore, tenant: str, response: dict[str, Any], conversation: list[dict[str, Any]]) -> None:
    record = {"response": response, "conversation": [*conversation, *(response.get("output") or [])]}
    await store.set(response_key(tenant, str(response["id"])), orjson.dumps(record), RESPONSE_TTL_S)


async def delete(store: StateStore, tenant: str, response_id: str) -> bool:
    return await store.delete(response_key(tenant, response_id)) > 0
