"""The escalation ladder end to end: real gateway, official SDKs, both API shapes, streaming and not.

A looping agent (the same call, the same result, again and again) is left alone for 3 repeats, nudged at
the 4th identical step, stopped gracefully at the 5th (a plain assistant answer, no tool call) and
blocked after that with a typed error (400; Anthropic 409; x-should-retry: false) naming the reason.
"""

from __future__ import annotations

import json

import pytest

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent

LS = {"command": "ls"}
CASES = [("openai", False), ("openai", True), ("anthropic", False), ("anthropic", True)]
BLOCK = {"openai": (400, "BadRequestError"), "anthropic": (409, "ConflictError")}  # status, SDK exception


def last_upstream_request(gw: RunningGateway) -> str:
    return json.dumps(gw.sim_requests(limit=1)[-1])


@pytest.mark.parametrize(("api", "stream"), CASES)
def test_nudge_then_stop_then_block(gw: RunningGateway, api: str, stream: bool) -> None:
    agent = make_agent(api, gw, f"ladder-{api}-{stream}", stream=stream)
    early = [agent.step("bash", LS, "a.py\nb.py") for _ in range(4)]
    assert [(o.kind, o.guard) for o in early] == [("tool", None)] * 4

    nudged = agent.step("bash", LS, "a.py\nb.py")
    assert nudged.kind == "tool" and nudged.guard == "nudge; reason=LOOP; detector=identical_calls"
    sent = last_upstream_request(gw)
    assert "[loop guard] Possible loop" in sent and "ran 4 times in a row" in sent

    stopped = agent.step("bash", LS, "a.py\nb.py")
    assert stopped.kind == "text" and stopped.guard == "stop; reason=LOOP; detector=identical_calls"
    assert stopped.text.startswith("Stopped by the loop guard (reason: loop")

    blocked = agent.step("bash", LS, "a.py\nb.py")
    assert blocked.kind == "error" and (blocked.status, blocked.exception) == BLOCK[api]
    assert blocked.error is not None and blocked.error["type"] == "agent_loop_stopped"
    assert "reason: loop" in blocked.error["message"]
    assert blocked.guard is not None and blocked.guard.startswith("block; reason=LOOP")
    if api == "openai":
        assert blocked.error["code"] == "LOOP"


def test_stop_never_reaches_the_provider(gw: RunningGateway) -> None:
    agent = make_agent("openai", gw, "ladder-provider-calls")
    for _ in range(5):
        agent.step("bash", LS, "same")
    before = gw.sim_stats()["totals"].get("requests", 0)
    assert agent.step("bash", LS, "same").action == "stop"
    assert agent.step("bash", LS, "same").action == "block"
    assert gw.sim_stats()["totals"].get("requests", 0) == before


def test_alternating_pair_is_caught(gw: RunningGateway) -> None:
    agent = make_agent("anthropic", gw, "cycle")
    actions = []
    for i in range(8):
        args = {"command": "cat a.py"} if i % 2 == 0 else {"command": "cat b.py"}
        actions.append(agent.step("bash", args, f"contents of {args['command'][-4:]}").action)
        if actions[-1] != "continue":
            break
    # A B A B A: the 3rd repeated step after the first period.
    assert actions == ["continue"] * 5 + ["nudge"]


def test_failing_command_with_changing_errors_is_caught(gw: RunningGateway) -> None:
    agent = make_agent("openai", gw, "errors")
    actions = [agent.step("bash", {"command": "make"}, f"Error: build failed at 12:00:{i:02}").action for i in range(5)]
    assert actions == ["continue"] * 4 + ["nudge"]
    assert agent.step("bash", {"command": "make"}, "Error: build failed at 12:01:00").guard == (
        "stop; reason=LOOP; detector=repeated_errors"
    )
