"""Honest agents the guard must leave alone, through the gateway with a session id (so the full ladder
applies): polling that waits, and an agent that leaves its loop after the nudge."""

from __future__ import annotations

import pytest

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_polling_a_build_with_waits_is_never_acted_on(gw: RunningGateway, api: str) -> None:
    agent = make_agent(api, gw, f"poll-{api}")
    for _ in range(10):
        outcome = agent.step("bash", {"command": "sleep 30; ci status 42"}, "build 42: running")
        assert outcome.kind == "tool" and outcome.guard is None


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_after_a_nudge_another_weak_signal_is_not_a_stop(gw: RunningGateway, api: str) -> None:
    """Nudged after four identical no-op edits, the agent re-runs its failing test once while it recovers
    (a no-progress signal of another kind: that run and its result are in the history already), then
    fixes the file: nudged again at most, never stopped."""
    agent = make_agent(api, gw, f"recover-{api}")
    outcomes = [agent.step("bash", {"command": "pytest -x"}, "1 failed")]
    outcomes += [agent.step("bash", {"command": "sed -i s/a/a/ setup.py"}, "") for _ in range(4)]
    recovery = [("pytest -x", "1 failed"), ("cat setup.py", "a = 1"), ("sed -i s/a/b/ setup.py", ""), ("pytest", "ok")]
    outcomes += [agent.step("bash", {"command": command}, output) for command, output in recovery]
    actions = [o.action for o in outcomes]
    assert actions[5] == "nudge" and "stop" not in actions and "block" not in actions, [o.guard for o in outcomes]
