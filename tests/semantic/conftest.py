"""Starts the setup recipe's pip resolution (test_setup_pulls_no_torch.py) at collection when that test is
selected, so that the index's latency overlaps the other tests instead of adding a minute to the suite."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.semantic.test_setup_pulls_no_torch import RESOLUTION, Resolution, index_reachable

SLOW_TEST = "test_setup_resolves_no_torch_on_a_standard_index"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under pytest-xdist every worker collects every test but runs only some: the test starts it then.
    if any(item.name == SLOW_TEST for item in items) and not hasattr(config, "workerinput") and index_reachable():
        resolution = Resolution(Path(tempfile.mkdtemp(prefix="cachegate-pip-resolution-")))
        resolution.start()
        config.stash[RESOLUTION] = resolution
