"""Chanting (the same sentence over and over in one answer): streams are cut cleanly, texts truncated,
and the session is struck (a nudge for the next request, then a stop)."""

from __future__ import annotations

import json

import httpx

from gateway.sim.responses import CHANT_SENTENCE
from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.guard_stage.agents import trailer
from tests.guard_stage.conftest import metric

CHANT = "[[sim:chant 60]]"
FULL = len(" ".join([CHANT_SENTENCE] * 60))


def stream_openai(gw: RunningGateway, session: str, *messages: str) -> tuple[str, dict[str, str], str]:
    """Raw SSE through the gateway (user and assistant turns alternate): the text, the trailing report and
    the finish reason."""
    turns = [{"role": "assistant" if i % 2 else "user", "content": text} for i, text in enumerate(messages)]
    body = {"model": "gpt-4o-mini", "stream": True, "messages": turns}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": session}
    raw = httpx.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers, timeout=30).text
    text, finish = "", ""
    for line in raw.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                text += choice["delta"].get("content") or ""
                finish = choice.get("finish_reason") or finish
    assert raw.rstrip().endswith("}") and "data: [DONE]" in raw
    return text, trailer(raw), finish


def test_stream_is_cut_and_the_session_struck(gw: RunningGateway) -> None:
    cuts = metric(gw, "cachegate_guard_stream_cuts_total")
    text, report, finish = stream_openai(gw, "chant-stream", CHANT)
    assert 10 * len(CHANT_SENTENCE) < len(text) < FULL / 3 and finish == "stop"
    assert report["x-cachegate-guard"] == "nudge; reason=LOOP; detector=chanting"
    assert metric(gw, "cachegate_guard_stream_cuts_total") == cuts + 1
    # The nudge goes with the session's next request; chanting again then stops the session.
    text, report, _ = stream_openai(gw, "chant-stream", CHANT, text, f"Answer briefly. {CHANT}")
    sent = json.dumps(gw.sim_requests(limit=1)[-1])
    assert "[loop guard] Possible loop: the text" in sent
    assert report["x-cachegate-guard"] == "stop; reason=LOOP; detector=chanting"
    block = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": "chant-stream"},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]},
    )
    assert block.status_code == 400 and block.json()["error"]["type"] == "agent_loop_stopped"


def test_non_streamed_text_is_truncated(gw: RunningGateway) -> None:
    raw = gw.anthropic().messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=2000,
        messages=[{"role": "user", "content": CHANT}],
        extra_headers={"x-session-id": "chant-json"},
    )
    message = raw.parse()
    text = "".join(block.text for block in message.content if block.type == "text")
    assert 10 * len(CHANT_SENTENCE) < len(text) < FULL / 3 and message.stop_reason == "end_turn"
    assert raw.headers["x-cachegate-guard"] == "nudge; reason=LOOP; detector=chanting"


def test_prose_and_repeated_list_items_pass(gw: RunningGateway) -> None:
    prose = " ".join(f"Step {i} changed file_{i}.py and {i * 7} tests pass." for i in range(40))
    items = "\n".join(["- rerun the failing test and check the output"] * 30)
    text, report, _ = stream_openai(gw, "no-chant", f"[[sim:text {prose}\n{items}]]")
    assert text == f"{prose}\n{items}" and "x-cachegate-guard" not in report


def test_an_answer_with_a_tool_call_keeps_it(gw: RunningGateway) -> None:
    """Chanting text before a tool call: the answer is not cut (the agent keeps its action), the session is
    still struck."""
    raw = gw.anthropic().messages.with_raw_response.create(
        model="claude-sonnet-4-5",
        max_tokens=4000,
        tools=[{"name": "bash", "description": "Run a command", "input_schema": {"type": "object"}}],
        messages=[{"role": "user", "content": CHANT + ' [[sim:tool bash {"command": "make"}]]'}],
        extra_headers={"x-session-id": "chant-with-call"},
    )
    message = raw.parse()
    calls = [block for block in message.content if block.type == "tool_use"]
    text = "".join(block.text for block in message.content if block.type == "text")
    assert len(calls) == 1 and calls[0].input == {"command": "make"} and message.stop_reason == "tool_use"
    assert len(text) == FULL
    assert raw.headers["x-cachegate-guard"] == "nudge; reason=LOOP; detector=chanting"


def test_a_repeating_decimal_is_not_chanting(gw: RunningGateway) -> None:
    answer = "The mean is 77." + "3" * 64 + ", so I will update the threshold next."
    text, report, _ = stream_openai(gw, "decimal", f"[[sim:text {answer}]]")
    assert text == answer and "x-cachegate-guard" not in report


def test_a_client_that_hangs_up_at_done_still_gets_its_strike(gw: RunningGateway) -> None:
    """The end of a cut stream (`[DONE]`) is sent only after the response stages ran: a client that closes
    the connection as soon as it reads it cannot keep the strike (or usage, budgets) from being recorded."""
    registry = gw.services.metrics.registry

    def cuts() -> float:  # read from the registry: no request gives the gateway time to catch up
        return registry.get_sample_value("cachegate_guard_stream_cuts_total", {"api": "openai"}) or 0.0

    before = cuts()
    body = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": CHANT}]}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": "chant-hangup"}
    with httpx.stream("POST", f"{gw.url}/v1/chat/completions", json=body, headers=headers) as response:
        for line in response.iter_lines():
            if line == "data: [DONE]":
                assert cuts() == before + 1  # recorded before [DONE] was sent
                break
