"""Loop-guard bypasses (issue #11, item 5), through a real gateway with the official OpenAI SDK and the
guard's session state in a real Redis.

- A sliding-window agent (it sends only its last N messages, so every request has the same number of
  messages) repeating a failing call is nudged, then stopped, then blocked: escalation follows the
  session's own requests, not the length of its history.
- A session over its max_cost_usd is stopped on its next request, however long its history, even after
  an earlier nudge at the same history length.
- A blocked session stays blocked when its request carries 5,000-deep nested JSON in tool arguments (the
  block is read before anything is parsed), and such arguments never crash the guard of a live session.
- A retried identical request (same body) repeats the decision instead of escalating.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from gateway.config import hash_key
from tests.gateway_harness import (
    ADMIN_KEY,
    REDIS_TEST_URL,
    TENANT_KEYS,
    RunningGateway,
    gateway_settings,
    running_gateway,
)

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
TOOLS: Any = [{"type": "function", "function": {"name": "bash", "description": "Run a command", "parameters": SCHEMA}}]
TASK = "Fix the failing build."
WINDOW = 8  # messages of history the agent keeps: 4 calls with their results
DEEP = "[" * 5000 + "]" * 5000
BUDGET_USD = 1e-3  # a few small requests fit; one request with a 20,000-token prompt does not


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    budget = {"guard": {"limits": {"max_cost_usd": BUDGET_USD}}}
    settings = gateway_settings(
        redis_url=REDIS_TEST_URL,
        tenants=[
            {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])]},
            {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "policy": budget},
        ],
        max_body_bytes=1024 * 1024,
    )
    with running_gateway(**settings) as gateway:
        yield gateway


def directive(command: str) -> str:
    return f"[[sim:tool bash {json.dumps({'command': command})}]]"


class SlidingWindowAgent:
    """An agent that sends its task plus only the last WINDOW messages of its history."""

    def __init__(self, gw: RunningGateway, tenant: str = "acme", *, numbered_calls: bool = False) -> None:
        self.session = f"sliding-{uuid.uuid4().hex[:12]}"
        self.client = gw.openai(tenant, default_headers={"x-session-id": self.session})
        self.history: list[dict[str, Any]] = []
        self.numbered_calls = numbered_calls  # ids call_0, call_1 ... in each turn (some harnesses do)

    def request(self, say: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": TASK}, *self.history[-WINDOW:], {"role": "user", "content": say}]

    def step(self, command: str, result: str, *, padding: str = "") -> tuple[int, str, str]:
        """(HTTP status, the guard's action, what came back: "tool" or the text)."""
        say = directive(command) + padding
        try:
            raw = self.client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=self.request(say), tools=TOOLS, temperature=0
            )
        except openai.APIStatusError as error:
            return error.status_code, (error.response.headers.get("x-cachegate-guard") or "").split(";")[0], ""
        action = (raw.headers.get("x-cachegate-guard") or "continue").split(";")[0]
        message = raw.parse().choices[0].message
        if not message.tool_calls:  # a final answer: the agent's next turn follows it
            self.history += [{"role": "user", "content": say}, {"role": "assistant", "content": message.content}]
            return 200, action, message.content or ""
        calls = [call.model_dump() for call in message.tool_calls]
        if self.numbered_calls:
            calls = [{**call, "id": f"call_{i}"} for i, call in enumerate(calls)]
        self.history.append({"role": "assistant", "content": None, "tool_calls": calls})
        self.history += [{"role": "tool", "tool_call_id": call["id"], "content": result} for call in calls]
        return 200, action, "tool"


def upstream_requests(gw: RunningGateway) -> int:
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    return int(httpx.get(f"{gw.sim_url}/sim/stats", headers=admin).json()["totals"].get("requests", 0))


def guard_failures(gw: RunningGateway) -> float:
    prefix = 'cachegate_stage_failures_total{stage="guard"}'
    return sum(float(line.rsplit(" ", 1)[1]) for line in gw.metrics().splitlines() if line.startswith(prefix))


def test_sliding_window_loop_escalates_to_a_block(gw: RunningGateway) -> None:
    agent = SlidingWindowAgent(gw)
    outcomes = [agent.step("make", f"Error: build failed at 12:00:{i:02}") for i in range(8)]
    assert len(agent.request("x")) == WINDOW + 2  # every request from the 5th on
    actions = [action for _, action, _ in outcomes]
    # The window holds 4 failing calls from the 4th request on: same message count from then on.
    assert actions[:5] == ["continue"] * 4 + ["nudge"]
    assert outcomes[5][:2] == (200, "stop") and outcomes[5][2].startswith("Stopped by the loop guard")
    assert outcomes[6][:2] == (400, "block") and outcomes[7][:2] == (400, "block")


def test_sliding_window_with_identical_results_escalates(gw: RunningGateway) -> None:
    # Same call, same result, same call id (numbered per turn): once the loop fills the window, the
    # window's first and last messages are the same on every request, only the ones between shift.
    agent = SlidingWindowAgent(gw, numbered_calls=True)
    warmup = [agent.step(f"cat part_{i}.txt", f"part {i}") for i in range(4)]  # the window is full
    looping = [agent.step("ls", "a.py\nb.py") for _ in range(9)]
    assert [o[1] for o in warmup + looping[:4]] == ["continue"] * 8
    # From the 5th request the window holds 4 identical steps: the body is then the same every time,
    # like a client retry, so the decision repeats for RETRY_REPLAYS (2) resends before escalating.
    assert [o[:2] for o in looping[4:]] == [(200, "nudge")] * 3 + [(200, "stop"), (400, "block")]


def test_over_budget_session_is_stopped_at_a_constant_history_length(gw: RunningGateway) -> None:
    agent = SlidingWindowAgent(gw, tenant="globex")
    results = [f"Error: build failed at 12:00:{i:02}" for i in range(4)] + ["Build OK"]
    actions = [agent.step("make", result)[1] for result in results]
    assert actions == ["continue"] * 4 + ["nudge"]
    # The nudge worked (the build passed); the next request carries a large prompt: over the budget now.
    assert agent.step("ls", "a.py", padding=" word" * 20_000)[:2] == (200, "continue")
    spent = upstream_requests(gw)
    status, action, text = agent.step("ls", "a.py")
    assert (status, action) in ((200, "stop"), (400, "block")), (status, action, text)
    assert agent.step("ls", "a.py")[:2] == (400, "block")
    assert upstream_requests(gw) == spent  # the provider was not called again


def test_blocked_session_stays_blocked_with_deeply_nested_arguments(gw: RunningGateway) -> None:
    agent = SlidingWindowAgent(gw)
    for i in range(8):
        if agent.step("make", f"Error: build failed at 12:00:{i:02}")[0] == 400:
            break
    else:
        pytest.fail("the loop was never blocked")
    failures = guard_failures(gw)
    deep_call = {"id": "call_deep", "type": "function", "function": {"name": "bash", "arguments": DEEP}}
    agent.history += [
        {"role": "assistant", "content": None, "tool_calls": [deep_call]},
        {"role": "tool", "tool_call_id": "call_deep", "content": "ok"},
    ]
    with pytest.raises(openai.BadRequestError) as refused:
        agent.client.chat.completions.create(model="gpt-4o-mini", messages=agent.request("go on"), tools=TOOLS)  # type: ignore[arg-type]
    assert refused.value.type == "agent_loop_stopped"
    assert guard_failures(gw) == failures


def test_deeply_nested_arguments_never_crash_the_guard(gw: RunningGateway) -> None:
    agent = SlidingWindowAgent(gw)
    failures = guard_failures(gw)
    deep_call = {"id": "call_deep", "type": "function", "function": {"name": "bash", "arguments": DEEP}}
    actions = []
    for i in range(4):
        agent.history += [
            {"role": "assistant", "content": None, "tool_calls": [{**deep_call, "id": f"call_{i}"}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "Error: no such file"},
        ]
        response = agent.client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=agent.request("go on"), tools=TOOLS
        )
        actions.append((response.headers.get("x-cachegate-guard") or "continue").split(";")[0])
    # The same (deep) call failing again and again is a loop like any other.
    assert actions == ["continue"] * 3 + ["nudge"]
    assert guard_failures(gw) == failures


def test_retried_request_repeats_the_decision(gw: RunningGateway) -> None:
    agent = SlidingWindowAgent(gw)
    actions = [agent.step("make", f"Error: build failed at 12:00:{i:02}")[1] for i in range(5)]
    assert actions[-1] == "nudge"
    body = {"model": "gpt-4o-mini", "messages": agent.request(directive("make")), "tools": TOOLS}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-session-id": agent.session}
    # A client retrying the very same request (e.g. after a timeout) twice: the decision is repeated.
    first, *retries = [httpx.post(f"{gw.url}/v1/chat/completions", json=body, headers=headers) for _ in range(3)]
    assert first.headers["x-cachegate-guard"].startswith("stop;")
    assert [r.headers.get("x-cachegate-guard", "").split(";")[0] for r in retries] == ["stop", "stop"]
    assert [r.status_code for r in (first, *retries)] == [200, 200, 200]
