"""A provider's error object reaches the caller as the provider sent it (type, code, param, message),
scrubbed only of secrets, never of ids: SDKs and agents branch on `code` and `param`, and the ids in a
message (`rs_...`, `toolu_...`) name the caller's own items. Bodies recorded from the real APIs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.recorded_provider import Recorded, Stub, recorded_provider, routes

# OpenAI's 404 for an unknown model, as quoted from a real response in LangChain.dart's retry docs.
MODEL_NOT_FOUND = {
    "error": {
        "message": "The model `fake-model` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }
}
# OpenAI's 400 for a temperature below 0 (issue 27's recorded exchange).
TEMPERATURE = {
    "error": {
        "message": "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "decimal_below_min_value",
    }
}
# The Responses API's 400 for a reasoning item replayed alone (the message as quoted in openai-agents-python's
# docs on reasoning_item_id_policy; a full-length item id as the API issues them).
ORPHAN_REASONING = {
    "error": {
        "message": "Item 'rs_68c4f1a2b3c48190a7e2d9f0c1b2a3d40e5f6a7b8c9d0e1f' of type 'reasoning' was provided "
        "without its required following item.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
}
# Anthropic's 400 for a tool_result without its tool_use (the message Anthropic sends, with the tool id).
ORPHAN_TOOL_RESULT = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_01A09q90qw90lq917835lq9. Each `tool_result` block must have a corresponding `tool_use` block "
        "in the previous message.",
    },
}
# Gemini's 404 for a retired model, as a live run logged it, and its 400 for an unknown request field (a
# google.rpc.BadRequest detail; the message ends in a newline, as Google's do).
GEMINI_NOT_FOUND = {
    "error": {
        "code": 404,
        "message": "models/gemini-1.5-flash is not found for API version v1beta, or is not supported for "
        "generateContent. Call ModelService.ListModels to see the list of available models and their supported "
        "methods.",
        "status": "NOT_FOUND",
    }
}
GEMINI_BAD_FIELD = {
    "error": {
        "code": 400,
        "message": "Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': Cannot find field.\n",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {
                        "field": "generation_config",
                        "description": "Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': "
                        "Cannot find field.",
                    }
                ],
            }
        ],
    }
}


@pytest.fixture(scope="module", params=["lean", "litellm"])
def stub_gateway(request: pytest.FixtureRequest) -> Iterator[tuple[RunningGateway, Stub]]:
    with recorded_provider() as stub:
        settings = gateway_settings(path=request.param, policy=CORE_POLICY, models=routes(stub.url, request.param))
        with running_gateway(**settings) as gw:
            yield gw, stub


def _answer(stub: Stub, status: int, body: dict[str, Any]) -> None:
    stub.answer = Recorded(status=status, body=body)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [(404, MODEL_NOT_FOUND, openai.NotFoundError), (400, TEMPERATURE, openai.BadRequestError)],
    ids=["model_not_found", "temperature"],
)
def test_openai_chat_error_passes_through(
    stub_gateway: tuple[RunningGateway, Stub], status: int, body: dict[str, Any], error: type[openai.APIError]
) -> None:
    gw, stub = stub_gateway
    _answer(stub, status, body)
    for stream in (False, True):
        with pytest.raises(error) as caught:
            gw.openai().chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}], temperature=-1, stream=stream
            )
        sent = body["error"]
        assert (caught.value.type, caught.value.code, caught.value.param) == (sent["type"], sent["code"], sent["param"])
        assert caught.value.body == sent


def test_responses_error_keeps_the_item_id(stub_gateway: tuple[RunningGateway, Stub]) -> None:
    gw, stub = stub_gateway
    _answer(stub, 400, ORPHAN_REASONING)
    with pytest.raises(openai.BadRequestError) as caught:
        gw.openai().responses.create(model="gpt-4o", input="hi")
    assert caught.value.body == ORPHAN_REASONING["error"]
    assert caught.value.param == "input"


def test_anthropic_error_keeps_its_type_and_the_tool_id(stub_gateway: tuple[RunningGateway, Stub]) -> None:
    gw, stub = stub_gateway
    _answer(stub, 400, ORPHAN_TOOL_RESULT)
    with pytest.raises(anthropic.BadRequestError) as caught:
        gw.anthropic().messages.create(
            model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.body == ORPHAN_TOOL_RESULT


def test_secrets_in_a_provider_error_are_still_scrubbed(stub_gateway: tuple[RunningGateway, Stub]) -> None:
    gw, stub = stub_gateway
    leaky = "Invalid 'tools': fetch from http://10.1.2.3:8000/v1 failed with Bearer abc.def (key sk-proj-Abc123xyz)"
    _answer(stub, 400, {"error": {**TEMPERATURE["error"], "message": leaky}})
    with pytest.raises(openai.BadRequestError) as caught:
        gw.openai().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    message = caught.value.body["message"]  # type: ignore[index]
    assert message.startswith("Invalid 'tools': fetch from ***"), message
    for secret in ("10.1.2.3", "http://", "abc.def", "sk-proj"):
        assert secret not in message, message
    assert caught.value.code == "decimal_below_min_value"


@pytest.mark.parametrize("body", [GEMINI_NOT_FOUND, GEMINI_BAD_FIELD], ids=["not_found", "bad_field"])
def test_gemini_error_keeps_code_status_and_details(stub_gateway: tuple[RunningGateway, Stub], body: Any) -> None:
    gw, stub = stub_gateway
    _answer(stub, body["error"]["code"], body)
    options = types.HttpOptions(base_url=gw.url, retry_options=types.HttpRetryOptions(attempts=1))
    client = genai.Client(api_key=TENANT_KEYS["acme"], http_options=options)
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert caught.value.details == body
    assert (caught.value.code, caught.value.status) == (body["error"]["code"], body["error"]["status"])
