"""Summaries: the write-ahead dump comes first, the request reuses the session's prefix with tools off,
and a failing summarizer never loses the request (compacted-only instead)."""

from __future__ import annotations

import re

import httpx

from gateway.compaction.layout import digest
from tests.compaction.conftest import sent_bodies
from tests.compaction.sessions import SYSTEM, TOOLS_OPENAI, openai_history
from tests.gateway_harness import TENANT_KEYS, RunningGateway

DUMP = re.compile(r"stored as (ctx_[0-9a-f]{24})")


WORDS = 11  # histories of their own: summaries are memoised per tenant by the content they replace


def _run(gw: RunningGateway, model: str, session: str, steps: int = 16) -> list[str]:
    actions = []
    for step in range(1, steps + 1):
        raw = gw.openai().chat.completions.with_raw_response.create(
            model=model,
            messages=openai_history(step, words=WORDS),
            tools=TOOLS_OPENAI,  # type: ignore[arg-type]
            extra_headers={"x-session-id": session},
        )
        assert raw.http_response.status_code == 200
        actions.append(raw.headers.get("x-cachegate-compaction-summary", "-"))
    return actions


def test_summary_request_reuses_prefix_and_dump_is_stored(gw: RunningGateway) -> None:
    gw.reset_sim()
    actions = _run(gw, "small", "summary-ok")
    assert "written" in actions
    bodies = sent_bodies(gw)
    summary_requests = [b for b in bodies if b.get("tool_choice") == "none"]
    assert len(summary_requests) == 1
    request = summary_requests[0]
    assert request["tools"] == TOOLS_OPENAI and request["messages"][0] == {"role": "system", "content": SYSTEM}
    # The summary request is a prefix of the request sent just before it, plus the instruction.
    previous = bodies[bodies.index(request) - 1]["messages"]
    assert request["messages"][:-1] == previous[: len(request["messages"]) - 1]
    final = bodies[-1]["messages"]
    summary = final[2]["content"]
    dump = DUMP.search(summary).group(1)  # type: ignore[union-attr]
    stored = httpx.get(f"{gw.url}/v1/context/{dump}", headers={"x-api-key": TENANT_KEYS["acme"]}).json()
    assert stored["kind"] == "history" and stored["content"][:10] == openai_history(16, words=WORDS)[:10]


def test_dump_is_written_even_when_the_summarizer_fails(gw: RunningGateway) -> None:
    actions = _run(gw, "small-broken-summary", "summary-unreachable")
    failures = [a for a in actions if a not in ("-", "written", "memo")]
    assert failures and all(a != "written" for a in actions)
    tried = [a for a in failures if a != "skipped"]
    assert tried and set(tried) == {"UpstreamError"} and len(tried) <= 3  # stops after max_summary_failures
    first_failed = next(i for i, a in enumerate(actions, 1) if a not in ("-", "written", "memo"))
    dump = "ctx_" + digest([None, openai_history(first_failed, words=WORDS)])
    stored = httpx.get(f"{gw.url}/v1/context/{dump}", headers={"x-api-key": TENANT_KEYS["acme"]})
    assert stored.status_code == 200 and stored.json()["kind"] == "history"  # written before the call
    last = sent_bodies(gw, 1)[0]["messages"]
    assert any(str(m.get("content", "")).startswith("[cachegate: output of") for m in last)  # compacted-only


def test_summarizer_500s_forward_compacted_only(gw: RunningGateway) -> None:
    gw.reset_sim()
    gw.queue_faults("500", "500", "500", model="gpt-4.1-mini")  # max_summary_failures, then skipped
    actions = _run(gw, "small-cheap-summary", "summary-500")
    assert "UpstreamError" in actions and "written" not in actions
    assert 'cachegate_compaction_summaries_total{model="small-cheap-summary",outcome="UpstreamError"}' in gw.metrics()


def test_summarizer_timeout_forwards_compacted_only(gw: RunningGateway) -> None:
    gw.queue_faults("timeout", model="gpt-4.1-mini")
    actions = _run(gw, "small-slow-summary", "summary-timeout", steps=22)
    assert "timeout" in actions  # and every request was answered (200, checked in _run)
    assert "written" in actions[actions.index("timeout") :]  # the next attempt, without the fault, succeeds
