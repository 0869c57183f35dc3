"""The opt-in terminate tool (tenant globex): offered to agent requests; a call ends the session and the
client gets a final text answer instead of the call."""

from __future__ import annotations

import json

import pytest

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent
from tests.guard_stage.conftest import admin, metric


@pytest.mark.parametrize(("api", "stream"), [("openai", False), ("openai", True), ("anthropic", True)])
def test_terminate_ends_the_session(gw: RunningGateway, api: str, stream: bool) -> None:
    session = f"terminate-{api}-{stream}"
    agent = make_agent(api, gw, session, stream=stream, tenant="globex")
    assert agent.step("bash", {"command": "pytest"}, "5 passed").kind == "tool"
    sent = gw.sim_requests(limit=1)[-1]
    assert '"terminate"' in json.dumps(sent)
    goals = metric(gw, 'cachegate_guard_terminations_total{status="GOAL"}')
    done = agent.step("terminate", {"status": "success", "reason": "all tests pass"}, "")
    assert done.kind == "text" and done.text.endswith("Finished (success): all tests pass")
    assert done.guard == "terminate; reason=GOAL"
    assert metric(gw, 'cachegate_guard_terminations_total{status="GOAL"}') == goals + 1
    view = admin(gw, "GET", "/session", tenant="globex", session=session).json()
    assert view["status"]["status"] == "GOAL" and view["status"]["reason"] == "all tests pass"


def test_terminate_with_failure(gw: RunningGateway) -> None:
    agent = make_agent("anthropic", gw, "terminate-failure", tenant="globex")
    done = agent.step("terminate", {"status": "failure", "reason": "the repository does not build"}, "")
    assert done.kind == "text" and done.guard == "terminate; reason=FAILURE"
    view = admin(gw, "GET", "/session", tenant="globex", session="terminate-failure").json()
    assert view["status"]["status"] == "FAILURE"


def test_not_offered_without_opt_in_or_without_tools(gw: RunningGateway) -> None:
    make_agent("openai", gw, "no-terminate").step("bash", {"command": "ls"}, "x")  # tenant acme: off
    assert '"terminate"' not in json.dumps(gw.sim_requests(limit=1))
    gw.openai("globex").chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert '"terminate"' not in json.dumps(gw.sim_requests(limit=1))
