"""Policies: session-less requests, the per-request policy header, hard limits, per-model overrides."""

from __future__ import annotations

import openai
import pytest

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent

LS = {"command": "ls"}


def test_sessionless_loop_is_nudged_then_stopped_from_its_history(gw: RunningGateway) -> None:
    plain = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert plain.choices[0].message.content == "hi"
    agent = make_agent("openai", gw, None)
    outcomes = [agent.step("bash", LS, "same") for _ in range(6)]
    # No session, no stored strikes: the rung is how many earlier requests of this history tripped too.
    assert [o.action for o in outcomes] == ["continue"] * 4 + ["nudge", "stop"]
    assert outcomes[-1].kind == "text" and outcomes[-1].guard == "stop; reason=LOOP; detector=identical_calls"
    later = [agent.step("bash", LS, "same") for _ in range(4)]
    assert all(o.status == 200 for o in later)  # never a block: nothing could enforce it


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_sessionless_loop_that_moves_on_is_not_stopped(gw: RunningGateway, api: str) -> None:
    agent = make_agent(api, gw, None)
    looped = [agent.step("bash", LS, "same").action for _ in range(4)]
    # The 5th request carries 4 identical calls: nudged, the model answers with another call (moves on).
    moved = [agent.step("bash", {"command": f"cat part_{i}.txt"}, f"part {i}").action for i in range(4)]
    polled = [agent.step("bash", {"command": "make status"}, f"{10 * i}% done").action for i in range(8)]
    assert looped == ["continue"] * 4 and moved == ["nudge"] + ["continue"] * 3 and polled == ["continue"] * 8


@pytest.mark.parametrize(("preset", "expected"), [("off", "continue"), ("warn-only", "warn")])
def test_policy_header(gw: RunningGateway, preset: str, expected: str) -> None:
    agent = make_agent("anthropic", gw, f"header-{preset}", headers={"x-cachegate-guard-policy": preset})
    outcomes = [agent.step("bash", LS, "same") for _ in range(8)]
    assert [o.kind for o in outcomes] == ["tool"] * 8
    assert {o.action for o in outcomes[4:]} == {expected}


def test_policy_header_refused_where_not_allowed(gw: RunningGateway) -> None:
    agent = make_agent("openai", gw, "header-refused", headers={"x-cachegate-guard-policy": "off"}, tenant="globex")
    refused = agent.step("bash", LS, "same")
    assert refused.status == 400 and refused.error is not None
    assert "x-cachegate-guard-policy" in refused.error["message"]
    unknown = make_agent("openai", gw, "header-unknown", headers={"x-cachegate-guard-policy": "lenient"})
    assert unknown.step("bash", LS, "same").status == 400


def test_llm_call_limit_stops_without_a_nudge(gw: RunningGateway) -> None:
    agent = make_agent("openai", gw, "limit-calls", tenant="globex")  # max_llm_calls: 6
    outcomes = [agent.step("bash", {"command": f"cat part_{i}.txt"}, f"part {i}") for i in range(7)]
    assert [o.action for o in outcomes] == ["continue"] * 6 + ["stop"]
    assert outcomes[-1].guard == "stop; reason=MAX_STEPS; detector=max_llm_calls"
    blocked = agent.step("bash", LS, "x")
    assert blocked.status == 400 and blocked.error is not None and blocked.error["code"] == "MAX_STEPS"


def test_cost_budget_from_a_model_override(gw: RunningGateway) -> None:
    client = gw.openai(default_headers={"x-session-id": "budget"})
    messages: list[dict[str, object]] = [{"role": "user", "content": "hello there"}]
    first = client.chat.completions.with_raw_response.create(model="gpt-budget", messages=messages)  # type: ignore[arg-type]
    assert "x-cachegate-guard" not in first.headers
    answer = first.parse().choices[0].message.content
    messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": "more"}]
    second = client.chat.completions.with_raw_response.create(model="gpt-budget", messages=messages)  # type: ignore[arg-type]
    assert second.headers["x-cachegate-guard"] == "stop; reason=BUDGET; detector=max_cost_usd"
    messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]
    with pytest.raises(openai.BadRequestError) as error:
        client.chat.completions.create(model="gpt-budget", messages=messages)  # type: ignore[arg-type]
    assert error.value.code == "BUDGET" and error.value.type == "agent_loop_stopped"
