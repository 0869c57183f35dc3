"""Gateways shared by the core tests (one per upstream path).

The optional stages are off here: these tests repeat identical requests on purpose (to see provider
prompt-cache reads, retries, faults), must reach the provider every time with the request as sent, and
check usage arithmetic against hand-computed values. Each stage has its own end-to-end tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway

CORE_POLICY = {stage: {"enabled": False} for stage in ("response_cache", "prompt_cache", "compaction", "guard")}


@pytest.fixture(scope="session", params=["lean", "litellm"])
def any_gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    """The same tests run through both upstream paths: same behaviour either way."""
    with running_gateway(**gateway_settings(path=request.param, policy=CORE_POLICY)) as gw:
        yield gw


@pytest.fixture(scope="session")
def gw() -> Iterator[RunningGateway]:
    with running_gateway(policy=CORE_POLICY) as gw:
        yield gw
