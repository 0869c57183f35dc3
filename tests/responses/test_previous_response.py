"""previous_response_id and GET/DELETE /v1/responses/{id}: stored per tenant by the gateway, the full
conversation sent upstream (never the id), `store: false` respected, other tenants' ids not found."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import RunningGateway, gateway_settings, running_gateway
from tests.redis_target import redis_url
from tests.responses.test_responses_api import MODELS, TOOLS

REDIS_URL = redis_url(2)


@pytest.mark.parametrize("model", MODELS)
def test_chain_sends_full_conversation(any_gateway: RunningGateway, model: str) -> None:
    client = any_gateway.openai()
    first = client.responses.create(model=model, input="[[sim:text first answer]]")
    second = client.responses.create(model=model, previous_response_id=first.id, input="[[sim:text second]]")
    assert second.output_text == "second"
    sent = any_gateway.sim_requests(limit=1)[-1]["body"]
    assert "previous_response_id" not in sent
    rendered = str(sent)
    assert "first answer" in rendered and rendered.index("[[sim:text first answer]]") < rendered.index("second")


@pytest.mark.parametrize("model", MODELS)
def test_tool_round_trip_by_previous_response(any_gateway: RunningGateway, model: str) -> None:
    client = any_gateway.openai()
    first = client.responses.create(model=model, input='[[sim:tool get_weather {"city": "Oslo"}]]', tools=TOOLS)
    call = next(item for item in first.output if item.type == "function_call")
    output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "snow"}]
    second = client.responses.create(model=model, previous_response_id=first.id, input=output, tools=TOOLS)
    assert second.output_text == "The tool returned: snow"


def test_store_false_is_not_stored(any_gateway: RunningGateway) -> None:
    client = any_gateway.openai()
    first = client.responses.create(model="gpt-4o-mini", input="[[sim:text private]]", store=False)
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model="gpt-4o-mini", previous_response_id=first.id, input="next")
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "previous_response_id"
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


def test_retrieve_delete_and_tenant_isolation(any_gateway: RunningGateway) -> None:
    acme, globex = any_gateway.openai("acme"), any_gateway.openai("globex")
    first = acme.responses.create(model="gpt-4o-mini", input="[[sim:text mine]]")
    assert acme.responses.retrieve(first.id).output_text == "mine"
    with pytest.raises(openai.NotFoundError):
        globex.responses.retrieve(first.id)
    with pytest.raises(openai.NotFoundError):
        globex.responses.create(model="gpt-4o-mini", previous_response_id=first.id, input="steal")
    with pytest.raises(openai.NotFoundError):
        globex.responses.delete(first.id)
    acme.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        acme.responses.retrieve(first.id)


def test_stream_is_stored_and_shared_across_replicas_by_redis() -> None:
    settings = gateway_settings(policy=CORE_POLICY, redis_url=REDIS_URL)
    with running_gateway(**settings) as one, running_gateway(**settings) as two:
        with one.openai().responses.stream(model="gpt-4o-mini", input="[[sim:text streamed once]]") as stream:
            first = stream.get_final_response()
        second = two.openai().responses.create(
            model="gpt-4o-mini", previous_response_id=first.id, input="[[sim:text again]]"
        )
        assert second.output_text == "again"
        assert two.openai().responses.retrieve(first.id).output_text == "streamed once"
        two.openai().responses.delete(first.id)
        two.openai().responses.delete(second.id)
