"""Fixtures shared by the deployment tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.pool_traffic import pool_simulators


@pytest.fixture(scope="module")
def pool_sims() -> Iterator[dict[str, str]]:
    """A pool's simulated deployments (tests/deploy/pool_traffic.py), for a module's gateway."""
    with pool_simulators() as sims:
        yield sims
