"""Guard caps that bind the caller's key, not the session ids it chooses: new sessions and session-less
requests per key, and an agent churning through session ids sharing its step cap and its stop."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from gateway.config import hash_key
from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway
from tests.guard_stage.agents import OPENAI_TOOLS
from tests.guard_stage.conftest import guard_settings

CALLER = {
    "sessions_per_key": {"count": 3, "window_s": 60},
    "sessionless_per_key": {"count": 3, "window_s": 60},
}
CHURN = {"caller": {"churn": {"sessions": 3, "window_s": 600}}, "limits": {"max_llm_calls": 4}}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    tenants = [
        {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])], "policy": {"guard": {"caller": CALLER}}},
        {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "policy": {"guard": CHURN}},
    ]
    with running_gateway(**guard_settings(tenants=tenants)) as gateway:
        yield gateway


def send(
    gw: RunningGateway, tenant: str, session: str | None, system: str = "You fix bugs.", turns: int = 0
) -> httpx.Response:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": "Fix it."}]
    for turn in range(turns):  # distinct calls: no loop for the detectors, only the step cap
        call = {
            "id": f"c{turn}",
            "type": "function",
            "function": {"name": "bash", "arguments": f'{{"command": "ls {turn}"}}'},
        }
        messages += [
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "ok"},
        ]
    messages.append({"role": "user", "content": f"[[sim:text ok]] {uuid.uuid4()}"})
    headers = {"authorization": f"Bearer {TENANT_KEYS[tenant]}", **({"x-session-id": session} if session else {})}
    body = {"model": "gpt-4o-mini", "messages": messages, "tools": OPENAI_TOOLS}
    return httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30)


def test_new_sessions_and_sessionless_requests_per_key_are_capped(gw: RunningGateway) -> None:
    run = uuid.uuid4().hex[:6]
    codes = [send(gw, "acme", f"{run}-{i}").status_code for i in range(4)]
    assert codes == [200, 200, 200, 429]
    assert send(gw, "acme", f"{run}-0", turns=1).status_code == 200  # a known session goes on
    refused = [send(gw, "acme", None) for _ in range(4)][-1]
    assert refused.status_code == 429 and "requests without a session id" in refused.json()["error"]["message"]
    assert 0 < float(refused.headers["retry-after"]) <= 60


def test_an_agent_churning_through_session_ids_shares_its_step_cap_and_its_stop(gw: RunningGateway) -> None:
    system = f"You fix bugs. Agent {uuid.uuid4()}"
    first = [send(gw, "globex", "churn-1", system, turns=turn) for turn in range(6)]
    guards = [r.headers.get("x-cachegate-guard", "") for r in first]
    assert guards[4].startswith("stop; reason=MAX_STEPS"), guards  # its 5th request: the cap of 4 calls
    # New session ids, and no session id at all, for the same agent (system prompt and tools): once it
    # churns (3 conversations in the window) its stop binds them all.
    fresh = [send(gw, "globex", f"churn-{i}", system) for i in range(2, 7)]
    assert fresh[0].status_code == 200 and "x-cachegate-guard" not in fresh[0].headers  # 2 conversations
    assert [r.status_code for r in fresh[1:]] == [400] * 4
    assert all(r.json()["error"]["type"] == "agent_loop_stopped" for r in fresh[1:])
    sessionless = [send(gw, "globex", None, system) for _ in range(3)]
    assert all(r.headers.get("x-cachegate-guard", "").startswith("stop") for r in sessionless)
    other = send(gw, "globex", "churn-other", "You write docs.")  # another agent on the same key
    assert other.status_code == 200 and "x-cachegate-guard" not in other.headers


def test_a_churning_agent_is_capped_on_its_total_steps(gw: RunningGateway) -> None:
    system = f"You triage issues. Agent {uuid.uuid4()}"
    answers = [send(gw, "globex", f"spread-{i}-{uuid.uuid4()}", system, turns=1) for i in range(6)]
    guards = [r.headers.get("x-cachegate-guard", "") for r in answers]
    # No session reaches 4 calls of its own; the agent does at its 5th conversation (churning from the 3rd).
    assert [g.split(";")[0] for g in guards[:4]] == ["", "", "", ""] and guards[4].startswith("stop; reason=MAX_STEPS")
    assert answers[5].status_code == 400
