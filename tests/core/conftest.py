"""Gateways shared by the gateway tests (one per upstream path)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway


@pytest.fixture(scope="session", params=["lean", "litellm"])
def any_gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    """The same tests run through both upstream paths: same behaviour either way."""
    with running_gateway(**gateway_settings(path=request.param)) as gw:
        yield gw


@pytest.fixture(scope="session")
def gw() -> Iterator[RunningGateway]:
    with running_gateway() as gw:
        yield gw
