"""The loop guard on the Gemini wire (generateContent / streamGenerateContent?alt=sse), through the
google-genai SDK: a stuck agent (`[[sim:loop ...]]`) is nudged (a text part after its functionResponse
parts), stopped with a normal Gemini answer (finishReason STOP, streamed or not) and then blocked (400
FAILED_PRECONDITION in Google's error shape, `x-should-retry: false`, sent once even with the SDK's retries
on); without a session id (Gemini CLI sends none) it is nudged, then stopped, never blocked. Each runs on a route of
another provider (the request converted) and on a Gemini route (the request as it is)."""

from __future__ import annotations

import pytest
from google.genai import types

from gateway.sim.responses import CHANT_SENTENCE
from tests.gateway_harness import RunningGateway
from tests.guard_stage.conftest import metric
from tests.guard_stage.wire_agents import (
    FINISHED,
    GEMINI_TOOLS,
    MODEL,
    TERMINATE,
    GeminiAgent,
    run_to_the_stop,
    run_without_a_session,
)

BLOCKS = 'cachegate_errors_total{api="gemini",type="agent_loop_stopped"}'
ROUTES = pytest.mark.parametrize("model", [MODEL, "gemini-2.5-flash"], ids=["converted", "native"])


@ROUTES
@pytest.mark.parametrize("stream", [False, True])
def test_session_ladder_nudge_stop_block(gw: RunningGateway, stream: bool, model: str) -> None:
    agent = GeminiAgent(gw, f"gemini-ladder-{stream}-{model}", stream=stream, retries=3, model=model)
    run_to_the_stop(gw, agent)
    before = metric(gw, BLOCKS)
    blocked = agent.step()  # retries on (3 attempts): a 400 is not retried
    assert blocked.status == 400 and blocked.exception == "ClientError" and blocked.should_retry == "false"
    assert blocked.error is not None and blocked.error["error"]["status"] == "FAILED_PRECONDITION"
    assert "Stopped by the loop guard" in blocked.error["error"]["message"]
    assert metric(gw, BLOCKS) - before == 1  # one request reached the gateway


@ROUTES
@pytest.mark.parametrize("stream", [False, True])
def test_sessionless_loop_is_nudged_then_stopped(gw: RunningGateway, stream: bool, model: str) -> None:
    run_without_a_session(GeminiAgent(gw, None, stream=stream, model=model))


@ROUTES
@pytest.mark.parametrize("stream", [False, True])
def test_chanting_is_cut(gw: RunningGateway, stream: bool, model: str) -> None:
    client = GeminiAgent(gw, f"gemini-chant-{stream}-{model}").client
    full = len(" ".join([CHANT_SENTENCE] * 60))
    if stream:
        chunks = list(client.models.generate_content_stream(model=model, contents="[[sim:chant 60]]"))
        text = "".join(chunk.text or "" for chunk in chunks)
        assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason is not None
    else:
        response = client.models.generate_content(model=model, contents="[[sim:chant 60]]")
        text = response.text or ""
        assert response.sdk_http_response is not None and response.sdk_http_response.headers is not None
        assert response.sdk_http_response.headers["x-cachegate-guard"] == "nudge; reason=LOOP; detector=chanting"
    assert 10 * len(CHANT_SENTENCE) < len(text) < full / 3


@pytest.mark.parametrize("stream", [False, True])
def test_terminate_tool_gives_a_final_answer(gw: RunningGateway, stream: bool) -> None:
    client = GeminiAgent(gw, f"gemini-terminate-{stream}", tenant="globex").client  # terminate_tool: true
    config = types.GenerateContentConfig(tools=list(GEMINI_TOOLS))
    if stream:  # buffered upstream while the tool is offered, replayed as chunks
        chunks = list(client.models.generate_content_stream(model=MODEL, contents=TERMINATE, config=config))
        text = "".join(chunk.text or "" for chunk in chunks)
        assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
        assert not [chunk for chunk in chunks if chunk.function_calls]
    else:
        response = client.models.generate_content(model=MODEL, contents=TERMINATE, config=config)
        text = response.text or ""
        assert not response.function_calls
    sent = gw.sim_requests(limit=1)[-1]["body"]
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["bash", "terminate"] and not sent.get("stream")
    assert text == FINISHED
