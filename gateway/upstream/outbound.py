"""What of a request leaves the gateway: the one filter every upstream call goes through (router.call).

Both paths get only the caller API's public body fields (the wire's `upstream_fields`) and the vetted
API-version/beta headers; anything else is dropped silently, counted, and its names logged at debug.
Each route then gets only the tools its provider runs (wire/server_tools.py) and, on a provider account
its tenants share, `store` off and no provider-side id (wire/provider_ids.py). What may not go is a 400.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from gateway.config import ModelConfig
from gateway.config.tenants import TenantRoute
from gateway.metrics import GatewayMetrics
from gateway.wire.base import WireFormat
from gateway.wire.fields import forwarded_headers, public_fields
from gateway.wire.provider_ids import shared_account_body
from gateway.wire.server_tools import check_tools

log = logging.getLogger("cachegate.upstream")

# Dropped names are the caller's strings: logged escaped, shortened and few.
MAX_LOGGED_NAMES = 16
MAX_LOGGED_NAME_CHARS = 48


def _names(dropped: list[str]) -> str:
    shown = [repr(name[:MAX_LOGGED_NAME_CHARS]) for name in dropped[:MAX_LOGGED_NAMES]]
    more = len(dropped) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def outbound_request(
    wire: WireFormat, body: Mapping[str, Any], headers: Mapping[str, str], metrics: GatewayMetrics
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers a provider may receive for a request in `wire`'s shape."""
    return filter_outbound(wire.name, wire.upstream_fields, body, headers, metrics)


def filter_outbound(
    api: str, fields: frozenset[str], body: Mapping[str, Any], headers: Mapping[str, str], metrics: GatewayMetrics
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers a provider may receive for a request to `api` whose public fields are `fields`."""
    kept, dropped = public_fields(body, fields)
    if dropped:
        metrics.upstream_dropped_fields.labels(api).inc(len(dropped))
        if log.isEnabledFor(logging.DEBUG):
            log.debug("not sent upstream (not %s API fields): %s", api, _names(dropped))
    return kept, forwarded_headers(headers)


def route_request(
    wire: str, route: ModelConfig, body: Mapping[str, Any], models: Sequence[ModelConfig]
) -> dict[str, Any]:
    """The body (already `outbound_request`'s) that `route` may receive; a 400 naming what it may not:
    a tool its provider does not run, a model (in a tool) that no route of `models` serves, a provider-side
    id on a shared account."""
    configured = frozenset(model.model for model in models if model.provider == route.provider)
    check_tools(wire, route.provider, body, configured)
    return dict(body) if owns_provider_account(route) else shared_account_body(wire, body)


def owns_provider_account(route: ModelConfig) -> bool:
    """Whether `route` calls its provider with its tenant's own key (config/tenants.py), not a shared one."""
    if not isinstance(route, TenantRoute):
        return False
    return bool(route.tenant_keys.get(route.name) or route.tenant_keys.get(route.provider))
