"""Gateways for the Responses API tests: one per upstream path, optional stages off (each stage's own
tests turn it on)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway


@pytest.fixture(scope="session", params=["lean", "litellm"])
def any_gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    with running_gateway(**gateway_settings(path=request.param, policy=CORE_POLICY)) as gw:
        yield gw
