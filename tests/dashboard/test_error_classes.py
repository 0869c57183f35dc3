"""Every error answer has one class, so intended refusals (guard, budget, rate limit) are never counted as
failures; the gateway's own 429s are told from the provider's by their code."""

from __future__ import annotations

import pytest

from gateway.error_classes import error_class
from gateway.errors import ErrorKind, GatewayError


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (GatewayError(ErrorKind.AGENT_STOPPED, "stopped", status=403), "guard"),
        (GatewayError(ErrorKind.BUDGET, "spent", code="budget_exceeded"), "budget"),
        (GatewayError(ErrorKind.RATE_LIMIT, "held", code="budget_held"), "budget"),
        (GatewayError(ErrorKind.RATE_LIMIT, "limit", code="rate_limit_exceeded"), "rate_limit"),
        (GatewayError(ErrorKind.RATE_LIMIT, "the provider's 429"), "provider"),
        (GatewayError(ErrorKind.NOT_FOUND, "no such model"), "client"),
        (GatewayError(ErrorKind.AUTHENTICATION, "bad key"), "client"),
        (GatewayError(ErrorKind.UPSTREAM, "provider failed"), "provider"),
        (GatewayError(ErrorKind.TIMEOUT, "provider slow"), "provider"),
        (GatewayError(ErrorKind.INTERNAL, "our bug"), "gateway"),
    ],
)
def test_each_error_has_its_class(error: GatewayError, expected: str) -> None:
    assert error_class(error.status, error.kind.value, error.code) == expected


def test_answers_and_unknown_kinds() -> None:
    assert error_class(200, None, None) is None
    assert error_class(418, "something_new", None) == "client" and error_class(503, None, None) == "gateway"
