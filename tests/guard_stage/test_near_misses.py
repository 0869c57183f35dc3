"""What looks like a loop but is progress never trips the guard (end to end, both API shapes)."""

from __future__ import annotations

import pytest

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent

APIS = ["openai", "anthropic"]


@pytest.mark.parametrize("api", APIS)
def test_polling_with_changing_output(gw: RunningGateway, api: str) -> None:
    agent = make_agent(api, gw, f"poll-{api}")
    check = {"command": "gh run view 42 --json status"}
    outcomes = [agent.step("bash", check, f'{{"status": "in_progress", "percent": {10 * i}}}') for i in range(10)]
    assert [o.action for o in outcomes] == ["continue"] * 10


@pytest.mark.parametrize("api", APIS)
def test_batch_edits(gw: RunningGateway, api: str) -> None:
    agent = make_agent(api, gw, f"batch-{api}")
    outcomes = [
        agent.step("bash", {"command": f"sed -i 's/old_name/new_name/' src/module_{i}.py"}, "") for i in range(10)
    ]
    assert [o.action for o in outcomes] == ["continue"] * 10


@pytest.mark.parametrize("api", APIS)
def test_retries_with_changed_arguments(gw: RunningGateway, api: str) -> None:
    agent = make_agent(api, gw, f"retry-{api}")
    attempts = [
        "pytest",
        "pytest -x",
        "pytest -x tests/test_a.py",
        "python -m pytest -x tests/test_a.py",
        "python -m pytest -x tests/test_a.py -k parse",
        "pip install -e . && pytest -x tests/test_a.py",
    ]
    outcomes = [agent.step("bash", {"command": cmd}, "Error: 1 test failed") for cmd in attempts]
    assert [o.action for o in outcomes] == ["continue"] * len(attempts)


def test_same_command_twice_in_a_row_is_fine(gw: RunningGateway) -> None:
    """Real strong-model runs repeat a command up to 3 times in a row; the guard acts on the 4th."""
    agent = make_agent("openai", gw, "twice")
    outcomes = [agent.step("bash", {"command": "git status"}, "clean") for _ in range(3)]
    outcomes.append(agent.step("bash", {"command": "git diff"}, "diff --git a/x b/x"))
    outcomes += [agent.step("bash", {"command": "git status"}, "clean") for _ in range(3)]
    assert [o.action for o in outcomes] == ["continue"] * 7
