"""GET and DELETE /v1/responses/{id}: the caller's tenant's stored responses (gateway/responses_store.py),
errors in OpenAI's shape; another tenant's id is not found."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from gateway.api.errors import error_response
from gateway.auth import presented_key
from gateway.errors import ErrorKind, GatewayError
from gateway.responses_store import delete, load, not_found
from gateway.services import Services
from gateway.wire import RESPONSES


def _tenant(services: Services, request: Request) -> str:
    tenant = services.keys.tenant_for(presented_key(request.headers))
    if tenant is None:
        raise GatewayError(ErrorKind.AUTHENTICATION, "Invalid API key.", code="invalid_api_key")
    return tenant.name


async def get_response(request: Request, response_id: str) -> Response:
    services: Services = request.app.state.services
    try:
        stored = await load(services.store, _tenant(services, request), response_id)
        if stored is None:
            raise not_found(response_id)
    except GatewayError as error:
        return error_response(RESPONSES, error, services.metrics)
    return Response(orjson.dumps(stored["response"]), media_type="application/json")


async def delete_response(request: Request, response_id: str) -> Response:
    services: Services = request.app.state.services
    try:
        if not await delete(services.store, _tenant(services, request), response_id):
            raise not_found(response_id)
    except GatewayError as error:
        return error_response(RESPONSES, error, services.metrics)
    body = {"id": response_id, "object": "response.deleted", "deleted": True}
    return Response(orjson.dumps(body), media_type="application/json")
