"""Model routing: the requested model -> its route, and the policy in force for this request."""

from __future__ import annotations

from gateway.config.tenants import route_for_tenant
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.stages.base import Stage


class RoutingStage(Stage):
    name = "routing"
    fail_closed = True

    async def on_request(self, ctx: RequestContext) -> None:
        route = ctx.services.settings.model_by_name(ctx.model_name)
        allowed = ctx.tenant.allowed_models if ctx.tenant else None
        if route is None or (allowed is not None and route.name not in allowed):
            raise GatewayError(
                ErrorKind.NOT_FOUND,
                f"The model '{ctx.model_name}' does not exist or you do not have access to it.",
                param="model",
                code="model_not_found",
            )
        # With the tenant's own provider key, if it has one: tenants never share a provider prompt cache.
        ctx.route = route_for_tenant(route, ctx.tenant)
        ctx.policy = ctx.services.policy_for(route, ctx.tenant)
