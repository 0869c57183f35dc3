"""Originals come back: by the authenticated endpoint (own tenant only), and by the retrieve_context tool."""

from __future__ import annotations

import re

import httpx

from tests.compaction.conftest import sent_bodies
from tests.compaction.sessions import TOOLS_ANTHROPIC, TOOLS_OPENAI, anthropic_history, openai_history, output
from tests.gateway_harness import TENANT_KEYS, RunningGateway

HANDLE = re.compile(r"ctx_[0-9a-f]{24}")


def _compact_openai(gw: RunningGateway, session: str, model: str = "small") -> list[dict[str, object]]:
    for steps in range(1, 9):
        gw.openai().chat.completions.create(
            model=model,
            messages=openai_history(steps),
            tools=TOOLS_OPENAI,  # type: ignore[arg-type]
            extra_headers={"x-session-id": session},
        )
    messages: list[dict[str, object]] = sent_bodies(gw, 1)[0]["messages"]
    return messages


def test_endpoint_returns_the_original_to_its_tenant_only(gw: RunningGateway) -> None:
    sent = _compact_openai(gw, "retrieval-endpoint")
    reference = str(sent[3]["content"])  # the oldest tool result, compacted
    assert reference.startswith("[cachegate: output of `bash` compacted")
    handle = HANDLE.search(reference).group(0)  # type: ignore[union-attr]
    url = f"{gw.url}/v1/context/{handle}"
    own = httpx.get(url, headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"})
    assert own.status_code == 200
    assert own.json()["content"] == output(0) and own.json()["tool"] == "bash"
    assert httpx.get(url, headers={"x-api-key": TENANT_KEYS["globex"]}).status_code == 404
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"x-api-key": "sk-wrong"}).status_code == 401
    assert 'cachegate_compaction_retrievals_total{found="yes",via="endpoint"} 1.0' in gw.metrics()


def test_tool_is_offered_and_answered_by_the_gateway(gw: RunningGateway) -> None:
    sent = _compact_openai(gw, "retrieval-tool", model="small-retrieval")
    assert [t["function"]["name"] for t in sent_bodies(gw, 1)[0]["tools"]] == ["bash", "retrieve_context"]
    handle = HANDLE.search(str(sent[3]["content"])).group(0)  # type: ignore[union-attr]
    history = openai_history(8)
    gw.reset_sim()
    history.append({"role": "assistant", "content": "Let me look again."})
    history.append({"role": "user", "content": f'[[sim:tool retrieve_context {{"handle": "{handle}"}}]]'})
    completion = gw.openai().chat.completions.create(
        model="small-retrieval",
        messages=history,
        tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        extra_headers={"x-session-id": "retrieval-tool"},
    )
    message = completion.choices[0].message
    assert not message.tool_calls  # the client never sees the gateway's own tool
    assert message.content and message.content.startswith("The tool returned: " + output(0)[:100])
    follow_up = sent_bodies(gw, 1)[0]["messages"]
    assert follow_up[-1] == {"role": "tool", "tool_call_id": follow_up[-2]["tool_calls"][0]["id"], "content": output(0)}
    totals = gw.sim_stats()["totals"]
    assert totals["requests"] == 2  # one round-trip for the tool, answered by the gateway
    assert completion.usage is not None  # and the client is told the usage of both rounds
    assert completion.usage.prompt_tokens == totals["input_tokens"] + totals.get("cache_read_tokens", 0)


def test_anthropic_tool_round_and_unknown_handle(gw: RunningGateway) -> None:
    history = anthropic_history(3)
    history.append({"role": "assistant", "content": "Checking."})
    unknown = "ctx_0000000000000000deadbeef"
    history.append({"role": "user", "content": f'[[sim:tool retrieve_context {{"handle": "{unknown}"}}]]'})
    reply = gw.anthropic().messages.create(
        model="small-claude-retrieval",
        max_tokens=100,
        messages=history,  # type: ignore[arg-type]
        tools=TOOLS_ANTHROPIC,  # type: ignore[arg-type]
    )
    assert reply.stop_reason == "end_turn" and all(b.type == "text" for b in reply.content)
    assert "No stored original" in reply.content[0].text  # type: ignore[union-attr]


def test_very_large_result_is_shrunk_on_arrival(gw: RunningGateway) -> None:
    history = openai_history(1, lines=150)  # ~3,500 tokens: above 0.15 of the 8K window
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="small",
        messages=history,
        tools=TOOLS_OPENAI,  # type: ignore[arg-type]
        extra_headers={"x-session-id": "shrink"},
    )
    assert raw.headers["x-cachegate-compaction"] == "compacted"
    shrunk = str(sent_bodies(gw, 1)[0]["messages"][-1]["content"])
    original = output(0, 150)
    assert shrunk.startswith("[cachegate: output of `bash` compacted")
    assert original[:2000] in shrunk and original[-2000:] in shrunk and len(shrunk) < len(original)
