"""What of a request leaves the gateway: the one filter every upstream call goes through (router.call).

Both paths get only the caller API's public body fields (the wire's `upstream_fields`) and the vetted
API-version/beta headers; anything else is dropped silently, counted, and its names logged at debug.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from gateway.metrics import GatewayMetrics
from gateway.wire.base import WireFormat
from gateway.wire.fields import forwarded_headers, public_fields

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
