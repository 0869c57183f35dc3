"""The agent workload of bench/production_load (issue 28): recorded sessions replayed turn by turn, with
their tools, in both wire formats, each session's turns in order across the measured parts."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import orjson

from bench.production_load.agent import Spec, body, turns
from gateway.traces import default_traces


def spec(wire: str, buckets: int = 4) -> Spec:
    return Spec(
        url="http://127.0.0.1:9/unused", wire=wire, model="m", stream=wire == "anthropic", headers={}, tag="t1",
        rate=100.0, timeout_s=1.0, traces=str(default_traces()), sessions=3, buckets=buckets, pids=[],
    )  # fmt: skip


def test_every_turn_of_every_session_once_in_order_across_the_parts() -> None:
    found = list(turns(spec("openai")))
    assert {t.session for t in found} == {0, 1, 2}
    for session in range(3):
        mine = [t for t in found if t.session == session]
        assert [t.index for t in mine] == list(range(len(mine)))
        assert [t.bucket for t in mine] == sorted(t.bucket for t in mine)  # parts follow the session
        assert {t.bucket for t in mine} == {0, 1, 2, 3}
        assert all(len(b.messages) > len(a.messages) for a, b in pairwise(mine))
        assert all(t.messages[-1]["role"] != "assistant" for t in mine)  # the agent's request before its reply


def test_bodies_carry_the_tools_and_the_run_tag_in_both_wires() -> None:
    last = list(turns(spec("openai")))[-1]
    chat = orjson.loads(body(spec("openai"), last))
    assert chat["tools"][0]["function"]["name"] == "bash" and chat["stream"] is False
    assert any(m.get("tool_calls") for m in chat["messages"])
    assert all(m["content"].endswith("[t1-2]") for m in chat["messages"] if isinstance(m.get("content"), str))
    messages = orjson.loads(body(spec("anthropic"), last))
    assert messages["tools"][0]["name"] == "bash" and messages["stream"] is True
    blocks = [b["type"] for m in messages["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert "tool_use" in blocks and "tool_result" in blocks
    assert Path(default_traces()).exists()


def test_an_agent_clis_parts_replace_the_sessions_in_both_wires() -> None:
    """--parts: an agent CLI's tools and system prompt (Anthropic-shaped) in place of the session's, the
    same bytes on every request (as the CLI resends them)."""
    system = [{"type": "text", "text": "You are a CLI."}, {"type": "text", "text": "Be careful."}]
    tools = [
        {"name": "Bash", "description": "Runs a command.", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search"},  # a server tool: no OpenAI form
    ]
    parts = {"tools": tools, "system": system}
    found = list(turns(spec("openai")))
    messages = [orjson.loads(body(spec("anthropic"), t, parts)) for t in found[:3]]
    assert all(m["system"] == system and m["tools"] == tools for m in messages)
    chats = [orjson.loads(body(spec("openai"), t, parts)) for t in found[:3]]
    for chat, turn in zip(chats, found[:3], strict=True):
        assert chat["messages"][0] == {"role": "system", "content": "You are a CLI.\n\nBe careful."}
        assert chat["messages"][1:] == turn.messages[1:] and turn.messages[0]["role"] == "system"
        assert chat["tools"] == [
            {
                "type": "function",
                "function": {"name": "Bash", "description": "Runs a command.", "parameters": {"type": "object"}},
            }
        ]
