"""Suite-wide setup: offline defaults before anything imports litellm, tiktoken or transformers; each test
folder one group of pytest-xdist's `--dist loadgroup` (the README's test command runs two workers)."""

import os
from pathlib import Path

import pytest

import gateway  # noqa: F401

# Each test gateway's ledger in its own memory (tests that need a file or PostgreSQL name one), so no
# test's spend seeds another's budgets through a shared file.
os.environ.setdefault("CACHEGATE_LEDGER__URL", "sqlite://")

TESTS = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A folder's tests run on one worker, in order, as in a run without workers: they share module-level
    servers and a Redis database that their fixtures flush (tests/redis_target.py), which tests of another
    folder running at the same time must not see."""
    for item in items:
        relative = item.path.relative_to(TESTS) if item.path.is_relative_to(TESTS) else item.path
        item.add_marker(pytest.mark.xdist_group(relative.parts[0]))

