"""Compaction on the OpenAI Responses and Gemini wires, through the official SDKs: function_call_output
items and functionResponse parts become references the simulated provider sees, their handles give the
originals back, summaries keep every call with its output, and the gateway answers its own
retrieve_context tool on both wires."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from google import genai
from google.genai import types

from tests.compaction.conftest import sent_bodies
from tests.compaction.sessions import SYSTEM, TOOLS_RESPONSES, gemini_contents, output, responses_input
from tests.gateway_harness import TENANT_KEYS, RunningGateway

HANDLE = re.compile(r"ctx_[0-9a-f]{24}")
COMPACTED = "[cachegate: output of `bash` compacted"
BASH = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="bash",
            description="Run a shell command",
            parameters=types.Schema(type=types.Type.OBJECT, properties={"command": types.Schema(type="STRING")}),
        )
    ]
)
CLIENTS: list[genai.Client] = []  # a Client closes its connection pool when collected


def _original(gw: RunningGateway, text: str) -> dict[str, Any]:
    handle = HANDLE.search(text).group(0)  # type: ignore[union-attr]
    response = httpx.get(f"{gw.url}/v1/context/{handle}", headers={"x-api-key": TENANT_KEYS["acme"]})
    assert response.status_code == 200
    found: dict[str, Any] = response.json()
    return found


def _pairs_complete(items: list[dict[str, Any]]) -> bool:
    """Every function_call_output follows its function_call, and every call is answered."""
    calls: set[str] = set()
    for item in items:
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        elif item.get("type") == "function_call_output":
            if item["call_id"] not in calls:
                return False
            calls.discard(item["call_id"])
    return not calls


def _responses(gw: RunningGateway, session: str, steps: int, model: str = "small", words: int = 8) -> Any:
    return gw.openai().responses.with_raw_response.create(
        model=model,
        instructions=SYSTEM,
        input=responses_input(steps, words=words),  # type: ignore[arg-type]
        tools=TOOLS_RESPONSES,  # type: ignore[arg-type]
        extra_headers={"x-session-id": session},
    )


def test_responses_function_call_outputs_become_references(gw: RunningGateway) -> None:
    actions = [_responses(gw, "responses-compact", steps).headers["x-cachegate-compaction"] for steps in range(1, 9)]
    assert "compacted" in actions
    sent = sent_bodies(gw, 1)[0]
    assert sent["instructions"] == SYSTEM
    outputs = [item for item in sent["input"] if item.get("type") == "function_call_output"]
    assert outputs[0]["output"].startswith(COMPACTED)  # the oldest result, as the provider saw it
    assert outputs[-1]["output"] == output(7)  # the newest stay whole
    assert _pairs_complete(sent["input"])
    original = _original(gw, outputs[0]["output"])
    assert original["content"] == output(0) and original["tool"] == "bash" and original["tool_call_id"] == "call_0"


def test_responses_summary_keeps_calls_with_their_outputs(gw: RunningGateway) -> None:
    gw.reset_sim()
    summaries = [
        _responses(gw, "responses-summary", steps, words=13).headers.get("x-cachegate-compaction-summary", "-")
        for steps in range(1, 17)
    ]
    assert "written" in summaries
    bodies = sent_bodies(gw)
    request = next(b for b in bodies if b.get("tool_choice") == "none")  # the summary request
    assert request["instructions"] == SYSTEM and request["tools"] == TOOLS_RESPONSES
    assert request["max_output_tokens"] == 1500 and "Summarize the conversation" in request["input"][-1]["content"]
    final = bodies[-1]["input"]
    assert final[0]["content"].startswith("Fix the failing test")  # the task stays pinned
    assert final[1]["content"].startswith("[cachegate: summary of")
    assert _pairs_complete(final)


def _gemini(gw: RunningGateway, session: str) -> genai.Client:
    options = types.HttpOptions(
        base_url=gw.url,
        headers={"x-session-id": session},
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    CLIENTS.append(genai.Client(api_key=TENANT_KEYS["acme"], http_options=options))
    return CLIENTS[-1]


def _generate(client: genai.Client, steps: int, model: str = "small", words: int = 8) -> types.GenerateContentResponse:
    return client.models.generate_content(
        model=model,
        contents=gemini_contents(steps, words=words),  # type: ignore[arg-type]
        config=types.GenerateContentConfig(system_instruction=SYSTEM, tools=[BASH]),
    )


def _headers(response: types.GenerateContentResponse) -> dict[str, str]:
    assert response.sdk_http_response is not None and response.sdk_http_response.headers is not None
    return response.sdk_http_response.headers


def test_gemini_function_responses_become_references(gw: RunningGateway) -> None:
    client = _gemini(gw, "gemini-compact")
    actions = [_headers(_generate(client, steps))["x-cachegate-compaction"] for steps in range(1, 9)]
    assert "compacted" in actions
    messages = sent_bodies(gw, 1)[0]["messages"]  # the Gemini request went upstream as Chat Completions
    tool_messages = [m for m in messages if m["role"] == "tool"]
    oldest = json.loads(tool_messages[0]["content"])["output"]
    assert oldest.startswith(COMPACTED)
    assert json.loads(tool_messages[-1]["content"]) == {"output": output(7)}
    original = _original(gw, oldest)
    assert original["content"] == output(0) and original["tool"] == "bash"


def test_gemini_route_gets_references_in_its_own_shape(gw: RunningGateway) -> None:
    """A Gemini route takes the request as it is: the references sit in its functionResponse parts."""
    client = _gemini(gw, "gemini-native-compact")
    actions = [
        _headers(_generate(client, steps, model="small-gemini"))["x-cachegate-compaction"] for steps in range(1, 9)
    ]
    assert "compacted" in actions
    contents = sent_bodies(gw, 1)[0]["contents"]
    answers = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    oldest = answers[0]["response"]["output"]
    assert oldest.startswith(COMPACTED) and answers[-1]["response"] == {"output": output(7)}
    original = _original(gw, oldest)
    assert original["content"] == output(0) and original["tool"] == "bash"


def test_gemini_route_summary_keeps_calls_with_their_answers(gw: RunningGateway) -> None:
    gw.reset_sim()
    client = _gemini(gw, "gemini-native-summary")
    summaries = [
        _headers(_generate(client, steps, model="small-gemini", words=15)).get("x-cachegate-compaction-summary", "-")
        for steps in range(1, 17)
    ]
    assert "written" in summaries
    final = sent_bodies(gw)[-1]["contents"]
    assert "[cachegate: summary of" in json.dumps(final)
    called = {p["functionCall"]["id"] for c in final for p in c["parts"] if "functionCall" in p}
    answered = {p["functionResponse"]["id"] for c in final for p in c["parts"] if "functionResponse" in p}
    assert called == answered  # no answer without its call, no call without its answer


def test_gemini_summary_is_written_and_pairs_hold(gw: RunningGateway) -> None:
    gw.reset_sim()
    client = _gemini(gw, "gemini-summary")
    summaries = [
        _headers(_generate(client, steps, words=15)).get("x-cachegate-compaction-summary", "-")
        for steps in range(1, 17)
    ]
    assert "written" in summaries
    bodies = sent_bodies(gw)
    request = next(b for b in bodies if b.get("tool_choice") == "none")  # toolConfig NONE, converted
    assert request["max_tokens"] == 1500 and request["messages"][0] == {"role": "system", "content": SYSTEM}
    final = bodies[-1]["messages"]
    assert final[2]["content"][0]["text"].startswith("[cachegate: summary of")
    answered = {m["tool_call_id"] for m in final if m["role"] == "tool"}
    called = {c["id"] for m in final if m["role"] == "assistant" for c in m.get("tool_calls") or []}
    assert answered == called  # no output without its call, no call without its output


def test_retrieval_tool_on_responses(gw: RunningGateway) -> None:
    history = responses_input(2)
    unknown = "ctx_0000000000000000deadbeef"
    history.append({"role": "user", "content": f'[[sim:tool retrieve_context {{"handle": "{unknown}"}}]]'})
    gw.reset_sim()
    response = gw.openai().responses.create(
        model="small-retrieval",
        input=history,  # type: ignore[arg-type]
        tools=TOOLS_RESPONSES,  # type: ignore[arg-type]
    )
    assert [item.type for item in response.output] == ["message"]  # the gateway's own call is not shown
    assert "No stored original" in response.output_text
    first, second = sent_bodies(gw, 2)
    assert [t["name"] for t in first["tools"]] == ["bash", "retrieve_context"]
    assert second["input"][-1]["type"] == "function_call_output"
    totals = gw.sim_stats()["totals"]
    assert response.usage is not None  # the usage of both rounds
    assert response.usage.input_tokens == totals["input_tokens"] + totals.get("cache_read_tokens", 0)


def test_retrieval_tool_on_gemini(gw: RunningGateway) -> None:
    client = _gemini(gw, "gemini-retrieval")
    for steps in range(1, 9):
        _generate(client, steps, model="small-retrieval", words=9)
    tools = sent_bodies(gw, 1)[0]["tools"]
    assert [t["function"]["name"] for t in tools] == ["bash", "retrieve_context"]
    reference = next(m["content"] for m in sent_bodies(gw, 1)[0]["messages"] if m["role"] == "tool")
    handle = HANDLE.search(reference).group(0)  # type: ignore[union-attr]
    contents = gemini_contents(8, words=9)
    contents.append({"role": "user", "parts": [{"text": f'[[sim:tool retrieve_context {{"handle": "{handle}"}}]]'}]})
    gw.reset_sim()
    response = client.models.generate_content(
        model="small-retrieval",
        contents=contents,  # type: ignore[arg-type]
        config=types.GenerateContentConfig(system_instruction=SYSTEM, tools=[BASH]),
    )
    assert not response.function_calls  # answered by the gateway
    assert response.text and "src/module_0/file_0.py:0: def handler_0_0(x)" in response.text  # the original
    assert gw.sim_stats()["totals"]["requests"] == 2
