"""Authentication: the virtual key decides the tenant. Fails closed."""

from __future__ import annotations

from gateway.auth import presented_key
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.stages.base import Stage


class AuthStage(Stage):
    name = "auth"
    fail_closed = True

    async def on_request(self, ctx: RequestContext) -> None:
        key = presented_key(ctx.headers, ctx.query_key)
        if key is None:
            raise GatewayError(
                ErrorKind.AUTHENTICATION,
                "Missing API key: send 'Authorization: Bearer <key>', 'x-api-key: <key>' or 'x-goog-api-key: <key>'.",
                code="missing_api_key",
            )
        identity = ctx.services.keys.identify(key)
        if identity is None:
            raise GatewayError(ErrorKind.AUTHENTICATION, "Invalid API key.", code="invalid_api_key")
        ctx.key, ctx.tenant = identity, identity.tenant
        if identity.managed:
            ctx.services.managed_keys.used(identity.id)
