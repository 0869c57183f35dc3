"""The loop guard on the OpenAI Responses wire (POST /v1/responses), through the openai SDK's
`client.responses`: a stuck agent (`[[sim:loop ...]]`) is nudged (the note goes upstream in the
Responses shape), stopped with a normal Responses answer (stream and not) and then blocked (400,
`x-should-retry: false`, sent once); without a session id it is nudged, then stopped, never blocked."""

from __future__ import annotations

import json

import pytest

from gateway.sim.responses import CHANT_SENTENCE
from tests.gateway_harness import RunningGateway
from tests.guard_stage.conftest import metric
from tests.guard_stage.wire_agents import (
    FINISHED,
    MODEL,
    RESPONSES_TOOLS,
    TERMINATE,
    ResponsesAgent,
    run_to_the_stop,
    run_without_a_session,
)

BLOCKS = 'cachegate_errors_total{api="responses",type="agent_loop_stopped"}'


@pytest.mark.parametrize("stream", [False, True])
def test_session_ladder_nudge_stop_block(gw: RunningGateway, stream: bool) -> None:
    agent = ResponsesAgent(gw, f"responses-ladder-{stream}", stream=stream, retries=2)
    run_to_the_stop(gw, agent)
    assert "[loop guard]" not in json.dumps(agent.input)  # the client's history is its own
    before = metric(gw, BLOCKS)
    blocked = agent.step()  # the SDK's default 2 retries are on
    assert blocked.status == 400 and blocked.exception == "BadRequestError"
    assert blocked.should_retry == "false" and blocked.error is not None
    assert blocked.error["type"] == "agent_loop_stopped" and blocked.error["code"] == "LOOP"
    assert metric(gw, BLOCKS) - before == 1  # one request: the SDK did not retry


@pytest.mark.parametrize("stream", [False, True])
def test_sessionless_loop_is_nudged_then_stopped(gw: RunningGateway, stream: bool) -> None:
    run_without_a_session(ResponsesAgent(gw, None, stream=stream))


def test_retried_nudge_is_not_escalated(gw: RunningGateway) -> None:
    agent = ResponsesAgent(gw, "responses-retry")
    assert [agent.step().action for _ in range(4)] == ["continue"] * 4
    history = list(agent.input)
    assert agent.step().action == "nudge"
    agent.input = history  # the client resends the same request (its answer was lost)
    assert agent.step().action == "nudge"


@pytest.mark.parametrize("stream", [False, True])
def test_chanting_is_cut(gw: RunningGateway, stream: bool) -> None:
    client = ResponsesAgent(gw, f"responses-chant-{stream}").client
    full = len(" ".join([CHANT_SENTENCE] * 60))
    if stream:
        with client.responses.stream(model="gpt-4o-mini", input="[[sim:chant 60]]") as events:
            text = events.get_final_response().output_text
    else:
        raw = client.responses.with_raw_response.create(model="gpt-4o-mini", input="[[sim:chant 60]]")
        text = raw.parse().output_text
        assert raw.headers["x-cachegate-guard"] == "nudge; reason=LOOP; detector=chanting"
    assert 10 * len(CHANT_SENTENCE) < len(text) < full / 3


@pytest.mark.parametrize("stream", [False, True])
def test_terminate_tool_gives_a_final_answer(gw: RunningGateway, stream: bool) -> None:
    client = ResponsesAgent(gw, f"responses-terminate-{stream}", tenant="globex").client  # terminate_tool: true
    if stream:
        with client.responses.stream(model=MODEL, input=TERMINATE, tools=RESPONSES_TOOLS) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(model=MODEL, input=TERMINATE, tools=RESPONSES_TOOLS)
    sent = gw.sim_requests(limit=1)[-1]["body"]
    assert [tool["name"] for tool in sent["tools"]] == ["bash", "terminate"] and not sent.get("stream")
    assert response.output_text == FINISHED and [item.type for item in response.output] == ["message"]
