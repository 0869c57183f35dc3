"""One gateway for the telemetry tests: the guard-stage settings (globex stops after 6 LLM calls), without
the response cache (each request must reach the provider)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.guard_stage.conftest import guard_settings


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(**guard_settings(policy={"response_cache": {"enabled": False}})) as gateway:
        yield gateway
