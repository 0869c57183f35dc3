"""Which side an error answer belongs to, so intended refusals are not counted with real failures:
guard (the loop guard stopped or blocked an agent), budget (a spent or held budget), rate_limit (the
gateway's own limits), client (the caller's request or key), provider (the upstream failed or refused)
and gateway (our own fault). From the record's fields, so live metrics and the ledger's history agree."""

from __future__ import annotations

from typing import Final

ERROR_CLASSES: Final = ("guard", "budget", "rate_limit", "client", "provider", "gateway")
_BY_KIND: Final = {
    "agent_loop_stopped": "guard",
    "budget_exceeded": "budget",
    "invalid_request": "client",
    "authentication": "client",
    "permission": "client",
    "not_found": "client",
    "method_not_allowed": "client",
    "request_too_large": "client",
    "upstream": "provider",
    "overloaded": "provider",
    "timeout": "provider",
    "internal": "gateway",
}
_BY_CODE: Final = {"budget_held": "budget", "rate_limit_exceeded": "rate_limit"}  # the gateway's own 429s


def error_class(status: int, kind: str | None, code: str | None) -> str | None:
    """The class of an answer (None: not an error). A 429 without one of our codes is the provider's."""
    if status < 400:
        return None
    if code in _BY_CODE:
        return _BY_CODE[code]
    if kind == "rate_limit":
        return "provider"
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    return "client" if status < 500 else "gateway"
