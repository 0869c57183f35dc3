"""Admin endpoints: inspect a session's steps and decisions, lift its block, reset it."""

from __future__ import annotations

import httpx

from tests.gateway_harness import RunningGateway
from tests.guard_stage.agents import make_agent
from tests.guard_stage.conftest import admin, metric

LS = {"command": "ls"}


def stopped_agent(gw: RunningGateway, session: str) -> object:
    agent = make_agent("openai", gw, session)
    actions = [agent.step("bash", LS, "same").action for _ in range(7)]
    assert actions == ["continue"] * 4 + ["nudge", "stop", "block"]
    return agent


def test_inspect_a_stopped_session(gw: RunningGateway) -> None:
    stopped_agent(gw, "admin-inspect")
    view = admin(gw, "GET", "/session", tenant="acme", session="admin-inspect").json()
    assert view["blocked"] is True and view["status"] == {"status": "active"}
    assert [(s["action"], s["reason"]) for s in view["strikes"]] == [("nudge", "LOOP"), ("stop", "LOOP")]
    assert [d["action"] for d in view["decisions"]] == ["nudge", "stop", "block"]
    assert view["counters"]["llm_calls"] == 7 and view["counters"]["tool_calls"] == 5
    assert view["counters"]["total_tokens"] > 0 and view["counters"]["cost_usd"] > 0
    steps = view["steps"]["steps"]
    assert steps[-1]["summary"] == 'bash {"command":"ls"}' and len({s["result"] for s in steps}) == 1
    assert "admin-inspect" in admin(gw, "GET", "/sessions", tenant="acme").json()["sessions"]
    assert metric(gw, "cachegate_guard_sessions_active") >= 1
    assert metric(gw, 'cachegate_guard_decisions_total{action="stop",detector="identical_calls",reason="loop"}') >= 1
    assert metric(gw, 'cachegate_guard_decisions_total{action="block"') >= 1


def test_unblock_and_reset(gw: RunningGateway) -> None:
    agent = stopped_agent(gw, "admin-reset")
    assert admin(gw, "POST", "/session/unblock", tenant="acme", session="admin-reset").status_code == 200
    # The loop is still at the tail of the history: unblocked, the ladder starts over with a nudge.
    assert agent.step("bash", LS, "same").action == "nudge"  # type: ignore[attr-defined]
    calls = admin(gw, "GET", "/session", tenant="acme", session="admin-reset").json()["counters"]["llm_calls"]
    assert calls == 8
    assert admin(gw, "POST", "/session/reset", tenant="acme", session="admin-reset").status_code == 200
    assert admin(gw, "GET", "/session", tenant="acme", session="admin-reset").status_code == 404
    # Reset forgets strikes and counters too; the loop at the tail trips again from the first rung.
    assert agent.step("bash", {"command": "git log"}, "commit 1").action == "nudge"  # type: ignore[attr-defined]
    assert admin(gw, "GET", "/session", tenant="acme", session="admin-reset").json()["counters"]["llm_calls"] == 1


def test_admin_key_required_and_unknown_session(gw: RunningGateway) -> None:
    anonymous = httpx.get(f"{gw.url}/admin/guard/session", params={"tenant": "acme", "session": "x"})
    assert anonymous.status_code == 401
    assert admin(gw, "GET", "/session", tenant="acme", session="never-seen").status_code == 404
    assert admin(gw, "GET", "/session", tenant="globex", session="admin-inspect").status_code == 404
