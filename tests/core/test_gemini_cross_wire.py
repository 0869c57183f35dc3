"""Conversion only where the caller's wire and the route's provider differ, and then without loss for what
both sides can express: a Gemini client on an OpenAI or Anthropic route (gateway/wire/gemini_convert.py,
gateway/wire/allowed_tools.py), and OpenAI or Anthropic clients on a Gemini route (LiteLLM converts),
through the real SDKs against the simulator."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import types
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from gateway.sim.gemini_api import signature
from gateway.usage import price_for
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.security.upstream_probe import trap_listener

UNLISTED = "gemini-3-unlisted-preview"  # a Gemini model missing from LiteLLM's map (a new release)
CLIENTS: list[genai.Client] = []  # a Client closes its HTTP connection pool when collected
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def gemini_route(model: str, **fields: Any) -> dict[str, Any]:
    return {"name": model, "provider": "gemini", "model": model, "api_base": "embedded-sim", "retries": 0, **fields}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    settings = gateway_settings()
    settings["models"] = [*settings["models"], gemini_route("gemini-3-pro-preview"), gemini_route(UNLISTED)]
    with running_gateway(**settings) as gateway:
        yield gateway


def gemini_client(url: str) -> genai.Client:
    options = types.HttpOptions(base_url=url, retry_options=types.HttpRetryOptions(attempts=1))
    CLIENTS.append(genai.Client(api_key=TENANT_KEYS["acme"], http_options=options))
    return CLIENTS[-1]


def declaration(name: str) -> types.FunctionDeclaration:
    return types.FunctionDeclaration(name=name, parameters=types.Schema(type=types.Type.OBJECT, properties={}))


# --- A Gemini client on a route of another provider ---


@pytest.mark.parametrize(("mode", "openai_mode"), [("ANY", "required"), ("VALIDATED", "auto"), ("AUTO", "auto")])
def test_allowed_function_names_become_allowed_tools(gw: RunningGateway, mode: str, openai_mode: str) -> None:
    calling = types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode(mode), allowed_function_names=["get_time", "get_weather"]
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration(n) for n in ("get_time", "get_weather", "delete")])],
        tool_config=types.ToolConfig(function_calling_config=calling),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    gemini_client(gw.url).models.generate_content(model="gpt-4o-mini", contents="what time is it?", config=config)
    sent = gw.sim_requests(1)[-1]["body"]
    allowed = [{"type": "function", "function": {"name": name}} for name in ("get_time", "get_weather")]
    assert sent["tool_choice"] == {"type": "allowed_tools", "allowed_tools": {"mode": openai_mode, "tools": allowed}}
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["get_time", "get_weather", "delete"]


def test_allowed_function_names_narrow_the_tools_of_a_provider_without_allowed_tools(gw: RunningGateway) -> None:
    """Anthropic has no allowed-subset choice (LiteLLM refuses OpenAI's): the same limit as only the allowed
    tools and a forced call."""
    calling = types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_time", "get_weather"]
    )
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration(n) for n in ("get_time", "get_weather", "delete")])],
        tool_config=types.ToolConfig(function_calling_config=calling),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    response = gemini_client(gw.url).models.generate_content(
        model="claude-sonnet-4-5", contents="what time is it?", config=config
    )
    assert [call.name for call in response.function_calls or []] == ["get_time"]
    sent = gw.sim_requests(1)[-1]["body"]
    assert sent["tool_choice"] == {"type": "any"}
    assert [tool["name"] for tool in sent["tools"]] == ["get_time", "get_weather"]


def test_openai_allowed_tools_reach_a_provider_without_them(gw: RunningGateway) -> None:
    tools: Any = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
        for name in ("get_time", "get_weather", "delete")
    ]
    allowed: Any = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "get_weather"}}]},
    }
    gw.openai().chat.completions.create(
        model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hi"}], tools=tools, tool_choice=allowed
    )
    sent = gw.sim_requests(1)[-1]["body"]
    assert sent["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in sent["tools"]] == ["get_weather"]


def test_user_turn_without_convertible_parts_keeps_its_place(gw: RunningGateway) -> None:
    """A user turn holding only what Chat Completions cannot carry (a Gemini file URI) stays as an empty
    user message: dropping it would start the conversation with the model's turn."""
    contents = [
        types.Content(
            role="user", parts=[types.Part.from_uri(file_uri="gs://bucket/a.pdf", mime_type="application/pdf")]
        ),
        types.Content(role="model", parts=[types.Part(text="Noted.")]),
        types.Content(role="user", parts=[types.Part(text="[[sim:text ok]]")]),
    ]
    response = gemini_client(gw.url).models.generate_content(model="gpt-4o-mini", contents=contents)
    assert response.text == "ok"
    messages = gw.sim_requests(1)[-1]["body"]["messages"]
    assert [(m["role"], m["content"]) for m in messages[:2]] == [("user", ""), ("assistant", "Noted.")]


def test_reasoning_tokens_come_back_as_thoughts() -> None:
    """OpenAI counts reasoning inside completion_tokens; Gemini reports it as thoughtsTokenCount, apart from
    the candidates. The bill still counts all of it as output."""
    answer = {
        "id": "chatcmpl-reasoned",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 300,
            "total_tokens": 400,
            "completion_tokens_details": {"reasoning_tokens": 256},
        },
    }
    with trap_listener(status=200, reply=answer) as provider:
        settings = gateway_settings()
        route = {"name": "reasoner", "provider": "openai", "model": "gpt-4o-mini", "api_base": f"{provider.url}/v1"}
        settings["models"] = [*settings["models"], {**route, "retries": 0}]
        with running_gateway(**settings) as gateway:
            raw = gemini_client(gateway.url).models.generate_content(model="reasoner", contents="think")
    usage = raw.usage_metadata
    assert usage is not None and raw.text == "42"
    assert (usage.prompt_token_count, usage.candidates_token_count, usage.thoughts_token_count) == (100, 44, 256)
    assert usage.total_token_count == 400
    assert raw.sdk_http_response is not None and raw.sdk_http_response.headers is not None
    price = price_for("gpt-4o-mini")
    expected = 100 * price.input + 300 * price.output
    assert float(raw.sdk_http_response.headers["x-cachegate-cost-usd"]) == pytest.approx(expected, rel=1e-3)


# --- OpenAI and Anthropic clients on a Gemini route (LiteLLM converts) ---


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_system_instruction_stays_for_a_model_litellm_does_not_know(gw: RunningGateway, client: str) -> None:
    if client == "openai":
        gw.openai().chat.completions.create(
            model=UNLISTED,
            messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "[[sim:text hi]]"}],
        )
    else:
        gw.anthropic().messages.create(
            model=UNLISTED,
            system="Be brief.",
            max_tokens=64,
            messages=[{"role": "user", "content": "[[sim:text hi]]"}],
        )
    body = gw.sim_requests(1)[-1]["body"]
    system = body.get("systemInstruction") or body.get("system_instruction")  # proto JSON takes both
    assert system == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "[[sim:text hi]]"}]}]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_thought_signature_survives_an_openai_client(gw: RunningGateway, stream: bool) -> None:
    """LiteLLM carries a Gemini 3 call's signature in the tool-call id, which an OpenAI client sends back
    unchanged; the next request must give it back to Gemini as the call's thoughtSignature. The bill is the
    simulator's candidates + thoughts at the output rate."""
    openai = gw.openai()
    messages: Any = [{"role": "user", "content": '[[sim:tool get_weather {"city": "Paris"}]]'}]
    before = gw.sim_stats()["models"].get(UNLISTED, {"input_tokens": 0, "output_tokens": 0})
    if stream:
        chunks = openai.chat.completions.create(model=UNLISTED, messages=messages, tools=[WEATHER], stream=True)
        deltas = [call for chunk in chunks for choice in chunk.choices for call in choice.delta.tool_calls or []]
        assert deltas[0].id and deltas[0].function
        call_id, arguments = deltas[0].id, deltas[0].function.arguments
    else:
        raw = openai.chat.completions.with_raw_response.create(model=UNLISTED, messages=messages, tools=[WEATHER])
        call = (raw.parse().choices[0].message.tool_calls or [])[0]
        assert isinstance(call, ChatCompletionMessageFunctionToolCall)
        call_id, arguments = call.id, call.function.arguments
        spent = gw.sim_stats()["models"][UNLISTED]
        price = price_for(f"gemini/{UNLISTED}")
        billed_output = spent["output_tokens"] - before["output_tokens"]  # candidates + thoughts
        expected = (spent["input_tokens"] - before["input_tokens"]) * price.input + billed_output * price.output
        assert float(raw.headers["x-cachegate-cost-usd"]) == pytest.approx(expected, rel=1e-3)
    assert "__thought__" in call_id
    tool_call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
    ]
    openai.chat.completions.create(model=UNLISTED, messages=messages, tools=[WEATHER])
    model_turn = gw.sim_requests(1)[-1]["body"]["contents"][1]
    assert model_turn["role"] == "model"
    sent = model_turn["parts"][0]["thoughtSignature"]
    assert base64.b64decode(sent) == signature("get_weather", {"city": "Paris"})
