"""One gateway on the embedded default config, as `make serve` runs it, for the README's recipes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gateway.config import load_settings
from tests.gateway_harness import RunningGateway, running_gateway


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    # host and port are where the harness binds; everything else is the embedded default as shipped
    with running_gateway(**load_settings().model_dump(exclude={"host", "port"})) as gateway:
        yield gateway
