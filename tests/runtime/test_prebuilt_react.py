"""create_react_agent against a tiny OpenAI-shaped HTTP server (uvicorn in a thread, loopback)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import agent_runtime as ar
from agent_runtime.prebuilt import create_react_agent, tool_schema
from tests.ports import spawn_port

Script = Callable[[dict[str, Any]], dict[str, Any]]


class FakeOpenAI:
    """Answers /v1/chat/completions with `script(request)`; keeps every request it saw."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: Script = lambda request: _text("hello")

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        message = self.script(body)
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )


def _text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[FakeOpenAI, str]]:
    fake = FakeOpenAI()
    app = Starlette(routes=[Route("/v1/chat/completions", fake.completions, methods=["POST"])])
    port = spawn_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        assert time.monotonic() < deadline, "fake OpenAI server did not start"
        time.sleep(0.01)
    yield fake, f"http://127.0.0.1:{port}/v1"
    uv.should_exit = True
    thread.join(timeout=5)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def search(query: str) -> str:
    """Search the index."""
    return "no results"


def test_tool_schema_from_signature() -> None:
    schema = tool_schema(add)["function"]
    assert schema["name"] == "add" and schema["description"] == "Add two integers."
    assert schema["parameters"]["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
    assert schema["parameters"]["required"] == ["a", "b"]


def test_tool_call_then_terminate(server: tuple[FakeOpenAI, str]) -> None:
    fake, url = server
    fake.requests.clear()

    def script(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        if last["role"] == "user":
            return _call("add", {"a": 2, "b": 3})
        return _call("terminate", {"status": "success", "message": f"the sum is {last['content']}"}, "call_2")

    fake.script = script
    agent = create_react_agent("test-model", [add], base_url=url, system_prompt="Be brief.")
    out = agent.invoke({"messages": [{"role": "user", "content": "2+3?"}]})
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert out["messages"][2]["content"] == "5"
    report = agent.last_run_report
    assert report is not None
    assert report.stop_reason is ar.StopReason.GOAL and report.message == "the sum is 5"
    assert report.tokens == 30
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert {t["function"]["name"] for t in fake.requests[0]["tools"]} == {"add", "terminate"}


def test_plain_answer_ends_the_run(server: tuple[FakeOpenAI, str]) -> None:
    fake, url = server
    fake.script = lambda request: _text("42")
    agent = create_react_agent("test-model", [add], base_url=url)
    out = agent.invoke({"messages": [{"role": "user", "content": "answer?"}]})
    assert out["messages"][-1]["content"] == "42"
    assert agent.last_run_report is not None and agent.last_run_report.stop_reason is ar.StopReason.GOAL


def test_looping_model_is_nudged_stopped_and_given_a_grace_answer(server: tuple[FakeOpenAI, str]) -> None:
    fake, url = server
    fake.requests.clear()

    def script(request: dict[str, Any]) -> dict[str, Any]:
        if "tools" not in request:
            return _text("I could not find it.")
        return _call("search", {"query": "same"})

    fake.script = script
    agent = create_react_agent("test-model", [search], base_url=url)
    out = agent.invoke({"messages": [{"role": "user", "content": "find it"}]})
    report = agent.last_run_report
    assert report is not None and report.stop_reason is ar.StopReason.LOOP
    assert [e.action for e in report.guard_events] == ["nudge", "grace", "stop"]
    assert out["messages"][-1] == {"role": "assistant", "content": "I could not find it."}
    nudged = [r for r in fake.requests if "Possible loop" in (r["messages"][-1].get("content") or "")]
    assert len(nudged) == 1
    assert len(fake.requests) <= 9  # caught within a few repeated calls
