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
    """Nudged for four identical no-op edits, the agent moves on and re-runs its tests while it recovers:
    a no-progress streak of other calls is nudged again, never stopped."""
    agent = make_agent(api, gw, f"recover-{api}")
    edit = {"command": "sed -i s/a/a/ setup.py"}
    assert [agent.step("bash", edit, "").action for _ in range(4)] == ["continue"] * 4
    steps = [("pytest -x", "1 failed"), ("cat setup.py", "a = 1"), ("pytest -x", "1 failed")] * 3
    outcomes = [agent.step("bash", {"command": command}, output) for command, output in steps]
    assert outcomes[0].action == "nudge"  # the request after four identical edits; the agent moves on
    assert all(o.kind == "tool" and o.action != "stop" for o in outcomes), [o.guard for o in outcomes]
