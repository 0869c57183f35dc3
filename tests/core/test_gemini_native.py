"""A Gemini route (provider `gemini`) takes a Gemini client's request as it is, on the lean path: the real
google-genai SDK against the simulator's Gemini API, which signs Gemini 3 function calls and refuses a
history that does not send the signature back, reports thinking apart from the answer, and caches
prefixes implicitly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google import genai
from google.genai import types

from gateway.usage import price_for
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

CLIENTS: list[genai.Client] = []  # a Client closes its HTTP connection pool when collected


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    settings = gateway_settings(path="lean")
    gemini_3 = {"name": "gemini-3-pro-preview", "provider": "gemini", "model": "gemini-3-pro-preview"}
    settings["models"] = [*settings["models"], {**gemini_3, "api_base": "embedded-sim", "retries": 0}]
    with running_gateway(**settings) as gateway:
        yield gateway


def client(gw: RunningGateway, session: str) -> genai.Client:
    options = types.HttpOptions(
        base_url=gw.url, headers={"x-session-id": session}, retry_options=types.HttpRetryOptions(attempts=1)
    )
    CLIENTS.append(genai.Client(api_key=TENANT_KEYS["acme"], http_options=options))
    return CLIENTS[-1]


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_request_reaches_the_provider_as_sent(gw: RunningGateway) -> None:
    config = types.GenerateContentConfig(
        system_instruction="Be brief.",
        thinking_config=types.ThinkingConfig(thinking_budget=512, include_thoughts=False),
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.AUTO)
        ),
        tools=[get_weather],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    response = client(gw, "native-as-sent").models.generate_content(
        model="gemini-2.5-flash", contents="[[sim:text Bonjour.]]", config=config
    )
    assert response.text == "Bonjour."
    sent = gw.sim_requests(1)[-1]
    assert sent["api"] == "gemini" and sent["path"].endswith("/v1beta/models/gemini-2.5-flash:generateContent")
    body = sent["body"]
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    thinking = body["generationConfig"]["thinkingConfig"]  # google-genai sends these keys in snake_case
    assert thinking in (
        {"thinkingBudget": 512, "includeThoughts": False},
        {"thinking_budget": 512, "include_thoughts": False},
    )
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"


def test_thinking_is_reported_and_billed_as_output(gw: RunningGateway) -> None:
    raw = client(gw, "native-thoughts").models.generate_content(
        model="gemini-2.5-flash", contents="[[sim:text Two words.]]"
    )
    usage = raw.usage_metadata
    assert usage is not None and usage.thoughts_token_count and usage.candidates_token_count
    assert usage.total_token_count == (
        (usage.prompt_token_count or 0) + usage.candidates_token_count + usage.thoughts_token_count
    )
    assert raw.sdk_http_response is not None and raw.sdk_http_response.headers is not None
    price = price_for("gemini/gemini-2.5-flash")
    output = usage.candidates_token_count + usage.thoughts_token_count
    expected = (usage.prompt_token_count or 0) * price.input + output * price.output
    assert float(raw.sdk_http_response.headers["x-cachegate-cost-usd"]) == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_thought_signatures_round_trip(gw: RunningGateway, stream: bool) -> None:
    """The simulated Gemini 3 refuses the second turn unless the call's signature comes back unchanged."""
    chat = client(gw, f"native-signatures-{stream}").chats.create(
        model="gemini-3-pro-preview", config=types.GenerateContentConfig(tools=[get_weather])
    )
    prompt = '[[sim:tool get_weather {"city": "Paris"}]] weather?'
    if stream:
        text = "".join(chunk.text or "" for chunk in chat.send_message_stream(prompt))
    else:
        text = chat.send_message(prompt).text or ""
    assert "sunny in Paris" in text  # the tool's result, answered by the model after the signed call
    history = chat.get_history()
    calls = [part for content in history for part in content.parts or [] if part.function_call]
    assert calls and all(part.thought_signature for part in calls)


def test_streamed_chunks_carry_usage(gw: RunningGateway) -> None:
    chunks = list(
        client(gw, "native-stream").models.generate_content_stream(
            model="gemini-2.5-flash", contents="[[sim:text one two three four five six seven]]"
        )
    )
    assert "".join(chunk.text or "" for chunk in chunks) == "one two three four five six seven"
    assert len(chunks) > 1 and all(chunk.usage_metadata for chunk in chunks)
    assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_repeated_request_is_an_exact_cache_hit(gw: RunningGateway) -> None:
    ask = client(gw, "native-cache").models.generate_content
    config = types.GenerateContentConfig(temperature=0)
    first = ask(model="gemini-2.5-flash", contents="[[sim:text cached answer]] q-native-cache", config=config)
    second = ask(model="gemini-2.5-flash", contents="[[sim:text cached answer]] q-native-cache", config=config)
    assert second.text == first.text == "cached answer"
    assert second.sdk_http_response is not None and second.sdk_http_response.headers is not None
    assert second.sdk_http_response.headers["x-cachegate-cache"] == "exact"
