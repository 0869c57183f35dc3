"""README.md's Python recipes (blocks tagged ``python recipe=<name>``), run verbatim in a fresh interpreter
against the embedded default: only the gateway's URL is the test's. The agent CLIs' recipes run in
tests/agent_clis, the frameworks' in tests/frameworks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.agent_clis.clis import recipe
from tests.gateway_harness import RunningGateway

# recipe -> what its output holds (the simulator echoes the last user message)
EXPECTED = {
    "quickstart-openai": ["Hello!"],
    "quickstart-anthropic": ["Hello!"],
    "litellm": ["openai/gpt-4o-mini Hello!", "anthropic/claude-sonnet-5-5 Hello!", "gemini/gemini-2.5-flash Hello!"],
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_recipe_runs_as_written(gw: RunningGateway, name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", recipe(name, gw.url)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(line in done.stdout for line in EXPECTED[name]), done.stdout
    assert "deprecated" not in done.stderr.lower(), done.stderr  # current model names: no end-of-life warning
