"""Provider-side state on the provider account tenants share: nothing is stored there, no id names it.

A tenant without its own provider key calls the provider with the gateway's account, where a stored
response, conversation, prompt, container or message id is open to whoever holds it. Such ids are
refused (a 400 in the caller's shape, not retried) and `store` is forced off; a tenant with its own key
for the route owns that account and keeps the provider's API whole.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from gateway.config import hash_key
from tests.gateway_harness import TENANT_KEYS, RunningGateway, running_gateway
from tests.security.upstream_probe import assert_refused, keyed_settings, last_provider_request

OWN_KEY_ENV = "CACHEGATE_TEST_GLOBEX_OPENAI_KEY"


@pytest.fixture(scope="module", params=["lean", "litellm"])
def gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    """acme shares the provider account; globex has its own OpenAI key (it owns that store)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(OWN_KEY_ENV, "sk-globex-own-key")
        settings = keyed_settings(request.param, monkeypatch, policy={"response_cache": {"enabled": False}})
        settings["tenants"] = [
            {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])]},
            {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "provider_keys": {"openai": OWN_KEY_ENV}},
        ]
        with running_gateway(**settings) as gw:
            yield gw


def provider_calls(gw: RunningGateway) -> int:
    stats = gw.sim_stats()
    return int(stats["totals"].get("requests", 0)) + sum(int(n) for n in stats["errors"].values())


def sent_body(gw: RunningGateway) -> dict[str, Any]:
    body: dict[str, Any] = last_provider_request(gw)["body"]
    return body


def test_responses_store_is_forced_off_on_the_shared_account(gateway: RunningGateway) -> None:
    prompt = f"store {uuid.uuid4().hex}"
    first = gateway.openai("acme").responses.create(model="gpt-4o-mini", input=prompt, store=True)
    assert sent_body(gateway)["store"] is False
    gateway.openai("acme").responses.create(model="gpt-4o-mini", input=prompt + " again")  # provider default: on
    assert sent_body(gateway)["store"] is False
    # The gateway still keeps the caller's response (previous_response_id is the gateway's own).
    gateway.openai("acme").responses.create(model="gpt-4o-mini", input="next", previous_response_id=first.id)
    assert prompt in str(sent_body(gateway)["input"])
    # A tenant with its own key owns its store: its `store` goes as sent.
    gateway.openai("globex").responses.create(model="gpt-4o-mini", input=prompt, store=True)
    assert sent_body(gateway)["store"] is True


def test_chat_store_is_forced_off_on_the_shared_account(gateway: RunningGateway) -> None:
    messages: Any = [{"role": "user", "content": f"store {uuid.uuid4().hex}"}]
    gateway.openai("acme").chat.completions.create(model="gpt-4o-mini", messages=messages, store=True)
    assert sent_body(gateway)["store"] is False
    gateway.openai("globex").chat.completions.create(model="gpt-4o-mini", messages=messages, store=True)
    assert sent_body(gateway)["store"] is True


RESPONSES_IDS: list[tuple[dict[str, Any], str]] = [
    ({"conversation": f"conv_{uuid.uuid4().hex}"}, "conversation"),
    ({"conversation": {"id": f"conv_{uuid.uuid4().hex}"}}, "conversation"),
    ({"prompt": {"id": f"pmpt_{uuid.uuid4().hex}", "version": "2"}}, "prompt.id"),
    (
        {"input": [{"type": "item_reference", "id": f"msg_{uuid.uuid4().hex}"}, {"role": "user", "content": "hi"}]},
        "input[0]",
    ),
    ({"tools": [{"type": "code_interpreter", "container": f"cntr_{uuid.uuid4().hex}"}]}, "tools[0].container"),
]


@pytest.mark.parametrize(
    ("fields", "param"),
    RESPONSES_IDS,
    ids=["conversation", "conversation-object", "prompt", "item_reference", "container"],
)
def test_responses_provider_ids_are_refused_on_the_shared_account(
    gateway: RunningGateway, fields: dict[str, Any], param: str
) -> None:
    request = {"model": "gpt-4o-mini", "input": f"ids {uuid.uuid4().hex}", **fields}
    before = provider_calls(gateway)
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.openai("acme").responses.create(**request)
    assert_refused(caught, param)
    assert provider_calls(gateway) == before
    # The tenant that owns its account sends them on, as the provider's API has them.
    try:
        gateway.openai("globex").responses.create(**request)
    except openai.APIStatusError as error:  # the simulated provider may not know the id; it was asked
        assert "names state kept at the provider" not in str(error.body)
    assert provider_calls(gateway) == before + 1


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"container": f"container_{uuid.uuid4().hex}"}, "container"),
        ({"container": {"id": f"container_{uuid.uuid4().hex}"}}, "container"),
        ({"diagnostics": {"previous_message_id": f"msg_{uuid.uuid4().hex}"}}, "diagnostics.previous_message_id"),
    ],
    ids=["container", "container-object", "previous-message"],
)
def test_anthropic_provider_ids_are_refused_on_the_shared_account(
    gateway: RunningGateway, fields: dict[str, Any], param: str
) -> None:
    before = provider_calls(gateway)
    with pytest.raises(anthropic.BadRequestError) as caught:
        gateway.anthropic("acme").messages.create(
            model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}], extra_body=fields
        )
    assert_refused(caught, param)
    assert provider_calls(gateway) == before


def test_gemini_context_cache_is_refused_on_the_shared_account(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the native Gemini path (a Gemini route); converted requests never carry `cachedContent`."""
    with running_gateway(**keyed_settings("lean", monkeypatch)) as gw:
        client = genai.Client(api_key=TENANT_KEYS["acme"], http_options=genai_types.HttpOptions(base_url=gw.url))
        config = genai_types.GenerateContentConfig(cached_content=f"cachedContents/{uuid.uuid4().hex}")
        before = provider_calls(gw)
        with pytest.raises(genai_errors.ClientError) as caught:
            client.models.generate_content(model="gemini-2.5-flash", contents="hi", config=config)
        assert caught.value.code == 400
        assert "cachedContent" in str(caught.value.message)
        assert provider_calls(gw) == before
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")  # the rest of the API passes
        assert provider_calls(gw) == before + 1


def test_reasoning_items_only_the_store_could_resolve_are_dropped(gateway: RunningGateway) -> None:
    """With `store` off the provider cannot find them (and with it on, they could be another tenant's)."""
    stored_id, carried_id, prompt = f"rs_{uuid.uuid4().hex}", f"rs_{uuid.uuid4().hex}", uuid.uuid4().hex
    items: Any = [
        {"role": "user", "content": prompt},
        {"type": "reasoning", "id": stored_id, "summary": []},
        {"type": "reasoning", "id": carried_id, "summary": [], "encrypted_content": "gAAA"},
        {"role": "user", "content": "go on"},
    ]
    gateway.openai("acme").responses.create(model="gpt-4o-mini", input=items)
    sent = str(sent_body(gateway)["input"])
    assert stored_id not in sent and carried_id in sent and prompt in sent
    gateway.openai("globex").responses.create(model="gpt-4o-mini", input=items)
    assert stored_id in str(sent_body(gateway)["input"])
