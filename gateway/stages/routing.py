"""Model routing: the requested model -> its route (aliases and wildcards resolved here, and only here),
and the policy in force for this request."""

from __future__ import annotations

from gateway.config import Settings, TenantConfig
from gateway.config.tenants import route_for_tenant
from gateway.context import RequestContext
from gateway.errors import ErrorKind, GatewayError
from gateway.stages.base import Stage

MAX_ECHOED_NAME_CHARS = 128
MAX_LISTED_MODELS = 50


def allowed_routes(settings: Settings, tenant: TenantConfig | None) -> list[str]:
    """The route names a tenant may call, in configuration order."""
    allowed = tenant.allowed_models if tenant else None
    return [m.name for m in settings.routes if allowed is None or m.name in allowed]


def model_not_found(requested: str, available: list[str]) -> GatewayError:
    shown = ", ".join(available[:MAX_LISTED_MODELS]) + (" ..." if len(available) > MAX_LISTED_MODELS else "")
    echoed = requested[:MAX_ECHOED_NAME_CHARS] + ("..." if len(requested) > MAX_ECHOED_NAME_CHARS else "")
    return GatewayError(
        ErrorKind.NOT_FOUND,
        f"The model '{echoed}' does not exist or you do not have access to it. Available models: {shown or 'none'}.",
        param="model",
        code="model_not_found",
    )


class RoutingStage(Stage):
    name = "routing"
    fail_closed = True

    async def on_request(self, ctx: RequestContext) -> None:
        settings = ctx.services.settings
        route = settings.route_for(ctx.model_name, ctx.tenant)
        allowed = ctx.tenant.allowed_models if ctx.tenant else None
        if route is None or (allowed is not None and route.name not in allowed):
            raise model_not_found(ctx.model_name, allowed_routes(settings, ctx.tenant))
        if route.name != ctx.model_name:
            ctx.notes["model_alias"] = route.name
        # The response's `model` is the provider's (the model that answered); this names the route.
        ctx.response_headers["x-cachegate-model"] = route.name
        # With the tenant's own provider key, if it has one: tenants never share a provider prompt cache.
        ctx.route = route_for_tenant(route, ctx.tenant)
        ctx.policy = ctx.services.policy_for(route, ctx.tenant, ctx.key)
