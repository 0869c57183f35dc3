"""README.md's Python recipes (blocks tagged ``python recipe=<name>``), run verbatim in a fresh interpreter
against the embedded default: only the gateway's URL is the test's. The agent CLIs' recipes run in
tests/agent_clis, the frameworks' in tests/frameworks."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.agent_clis.clis import recipe
from tests.gateway_harness import RunningGateway
from tests.started_together import Command, Started, started_together

# recipe -> what its output holds (the simulator echoes the last user message)
EXPECTED = {
    "quickstart-openai": ["Hello!"],
    "quickstart-anthropic": ["Hello!"],
    "litellm": ["openai/gpt-4o-mini Hello!", "anthropic/claude-sonnet-5-5 Hello!", "gemini/gemini-2.5-flash Hello!"],
}


@pytest.fixture(scope="module")
def recipe_runs(gw: RunningGateway) -> Iterator[dict[str, Started]]:
    """Every recipe in its fresh interpreter, all started at once (tests/started_together.py)."""
    commands = {name: Command([sys.executable, "-c", recipe(name, gw.url)]) for name in EXPECTED}
    with started_together(commands) as runs:
        yield runs


@pytest.mark.parametrize("name", list(EXPECTED))
def test_recipe_runs_as_written(recipe_runs: dict[str, Started], name: str) -> None:
    done = recipe_runs[name].result(timeout_s=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(line in done.stdout for line in EXPECTED[name]), done.stdout
    assert "deprecated" not in done.stderr.lower(), done.stderr  # current model names: no end-of-life warning
