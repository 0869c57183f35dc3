"""Honest agents the guard must leave alone, through the gateway with a session id (so the full ladder
applies): polling that waits (a sleep in the call, or pauses between calls), an agent that leaves its
loop after the nudge, and one that verifies its fix before submitting."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.guard_stage.agents import make_agent
from tests.guard_stage.conftest import guard_settings


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


def test_verifying_a_fix_before_submitting_is_not_acted_on(gw: RunningGateway) -> None:
    """The agent reproduces the bug, edits, then runs its reproduction scripts and tests again (some print
    what they printed before the edit), twice over before it submits: checks of a change, not revisits."""
    agent = make_agent("openai", gw, "verify-before-submit")
    checks = [("python repro.py", "ValueError"), ("python repro2.py", "ok"), ("pytest tests/test_x.py", "3 passed")]
    script = [*checks, ("sed -i 's/int(x)/float(x)/' src/x.py", ""), *checks, ("git diff", "+float(x)"), *checks]
    outcomes = [agent.step("bash", {"command": command}, output) for command, output in script]
    assert all(o.kind == "tool" and o.guard is None for o in outcomes), str([o.guard for o in outcomes])


def test_revisiting_the_same_checks_without_a_change_is_acted_on(gw: RunningGateway) -> None:
    """The control: the same checks again and again with nothing changed in between: no progress."""
    agent = make_agent("openai", gw, "no-change-revisits")
    checks = [("python repro.py", "ValueError"), ("cat src/x.py", "x = int(x)"), ("pytest tests/test_x.py", "1 failed")]
    script = [*checks, ("git diff", ""), *checks, ("git diff", ""), *checks]
    outcomes = [agent.step("bash", {"command": command}, output) for command, output in script]
    assert "nudge" in [o.action for o in outcomes], [o.guard for o in outcomes]


@pytest.fixture(scope="module")
def paced() -> Iterator[RunningGateway]:
    """A gateway that counts a pause of 0.4 s before the next request as waiting, and caps polling at 3 s."""
    guard = {"wait_gap_s": 0.4, "thresholds": {"long_polling_s": 3.0}}
    with running_gateway(**guard_settings(policy={"guard": guard})) as gateway:
        yield gateway


def test_polling_with_pauses_between_calls_is_polling_until_the_wall_clock_cap(paced: RunningGateway) -> None:
    """The same status call, unchanged, with the agent pausing between calls (no sleep in the call itself):
    left alone, until the same status has been polled for the cap (3 s here): then nudged."""
    agent = make_agent("anthropic", paced, "poll-with-pauses")
    outcomes = []
    started = time.monotonic()
    while time.monotonic() - started < 2.0:
        outcomes.append(agent.step("bash", {"command": "ci status 42"}, "build 42: running"))
        time.sleep(0.5)
    assert len(outcomes) >= 4 and all(o.guard is None for o in outcomes), [o.guard for o in outcomes]
    while time.monotonic() - started < 5.0 and outcomes[-1].guard is None:
        outcomes.append(agent.step("bash", {"command": "ci status 42"}, "build 42: running"))
        time.sleep(0.5)
    assert outcomes[-1].action == "nudge" and "long_polling" in (outcomes[-1].guard or ""), outcomes[-1].guard


def test_the_same_calls_without_pauses_are_a_loop(paced: RunningGateway) -> None:
    agent = make_agent("anthropic", paced, "poll-without-pauses")
    outcomes = [agent.step("bash", {"command": "ci status 42"}, "build 42: running") for _ in range(5)]
    assert outcomes[-1].action == "nudge" and "identical_calls" in (outcomes[-1].guard or ""), outcomes[-1].guard
