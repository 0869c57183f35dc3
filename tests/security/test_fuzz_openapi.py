"""Schema fuzzing of the whole OpenAPI surface with schemathesis: no input may produce a 5xx.

Upstream-side 5xx (502/504 from provider faults) are legitimate answers, but generated bodies never
script the simulator's faults, so any 5xx here is a gateway bug.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from tests.gateway_harness import ADMIN_HEADERS, ADMIN_KEY, TENANT_KEYS, running_gateway


def test_no_server_errors_anywhere() -> None:
    with running_gateway() as gw:
        schema = schemathesis.openapi.from_url(f"{gw.url}/openapi.json", headers=ADMIN_HEADERS)  # admin only
        operations = [result.ok() for result in schema.get_all_operations()]
        assert {op.path for op in operations} >= {"/v1/chat/completions", "/v1/messages", "/admin/config"}
        for operation in operations:
            fuzz_operation(operation, gw.url)


def fuzz_operation(operation: Any, base_url: str) -> None:
    key = ADMIN_KEY if operation.path.startswith("/admin") else TENANT_KEYS["acme"]

    @given(case=operation.as_strategy())
    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def fuzz(case: Any) -> None:
        case.call_and_validate(
            base_url=base_url, headers={"authorization": f"Bearer {key}"}, checks=[not_a_server_error]
        )

    fuzz()
