"""Model aliases and wildcards: any model name a client sends -> a configured route, through real SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from gateway.config import Settings, hash_key, load_settings
from gateway.config.aliases import lookup
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

OFF = {stage: {"enabled": False} for stage in ("response_cache", "prompt_cache", "compaction", "guard")}
GLOBAL_ALIASES = {"claude-*": "claude-sonnet-4-5", "gpt-*": "gpt-4o-mini", "gpt-6*": "flaky", "exact-name": "slow"}


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    tenants = [
        # acme: its own map first; "*" catches anything the global map does not, allowed_models binds after.
        {
            "name": "acme",
            "keys": [hash_key(TENANT_KEYS["acme"])],
            "model_aliases": {"gpt-6.1-sol": "gpt-4o-mini", "*": "claude-sonnet-4-5"},
        },
        {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])], "allowed_models": ["gpt-4o-mini", "slow"]},
    ]
    with running_gateway(**gateway_settings(policy=OFF, tenants=tenants, model_aliases=GLOBAL_ALIASES)) as gw:
        yield gw


def test_lookup_exact_then_longest_pattern() -> None:
    aliases = {"*": "a", "claude-*": "b", "claude-opus-*": "c", "claude-opus-5-5": "d", "o[0-9]*": "e"}
    assert lookup(aliases, "claude-opus-5-5") == "d"
    assert lookup(aliases, "claude-opus-4-1") == "c"
    assert lookup(aliases, "claude-haiku-5-5") == "b"
    assert lookup(aliases, "o3") == "e"
    assert lookup(aliases, "llama") == "a"
    assert lookup({"claude-*": "b"}, "gpt-4o") is None
    assert lookup({"Claude-*": "b"}, "claude-x") is None  # case-sensitive, as providers' ids are


def test_settings_reject_aliases_to_unknown_routes() -> None:
    with pytest.raises(ValueError, match="unknown models"):
        Settings(**gateway_settings(model_aliases={"claude-*": "nope"}))
    tenants = [{"name": "t", "keys": [hash_key("k")], "model_aliases": {"*": "nope"}}]
    with pytest.raises(ValueError, match="tenant 't' model_aliases"):
        Settings(**gateway_settings(tenants=tenants))


@pytest.mark.parametrize(
    ("requested", "route"),
    [
        ("claude-opus-5-5", "claude-sonnet-4-5"),  # Claude Code's default
        ("claude-sonnet-5-5", "claude-sonnet-4-5"),
        ("claude-haiku-5-5", "claude-haiku-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("gpt-6.1-sol", "gpt-4.1-mini"),  # Codex
        ("gpt-5.6-luna", "gpt-4.1-mini"),  # the Agents SDK
        ("gpt-5-mini", "gpt-4o-mini"),
        ("gemini-3.8-flash", "gemini-3-pro-preview"),  # Gemini CLI
        ("gemini-3.5-flash-lite", "gemini-2.5-flash"),  # its router call
        ("gpt-4o-mini", "gpt-4o-mini"),  # a route's own name
    ],
)
def test_embedded_default_maps_client_defaults(requested: str, route: str) -> None:
    found = load_settings().route_for(requested)
    assert found is not None and found.name == route


def test_embedded_default_has_no_catch_all() -> None:
    assert load_settings().route_for("llama-4") is None


def test_allowed_models_bind_after_aliases(gw: RunningGateway) -> None:
    # claude-opus-5-5 resolves to claude-sonnet-4-5, which globex may not use: 404 listing what it may use.
    with pytest.raises(anthropic.NotFoundError) as error:
        gw.anthropic("globex").messages.create(
            model="claude-opus-5-5", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        )
    assert error.value.status_code == 404
    body = error.value.body
    assert isinstance(body, dict) and body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert "Available models: gpt-4o-mini, slow." in body["error"]["message"]


def test_unknown_model_lists_allowed_models(gw: RunningGateway) -> None:
    with pytest.raises(openai.NotFoundError) as error:
        gw.openai("globex").chat.completions.create(model="llama-4", messages=[{"role": "user", "content": "hi"}])
    assert error.value.code == "model_not_found" and error.value.param == "model"
    assert "'llama-4'" in error.value.message and "Available models: gpt-4o-mini, slow." in error.value.message
    # Not retried: the SDK's retries (on here) do not retry a 404, and nothing reached the provider.
    before = len(gw.sim_requests(50))
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=TENANT_KEYS["globex"], max_retries=3)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="llama-4", messages=[{"role": "user", "content": "hi"}])
    assert len(gw.sim_requests(50)) == before


def test_unknown_model_name_is_bounded_in_the_message(gw: RunningGateway) -> None:
    response = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['globex']}"},
        json={"model": "x" * 5000, "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 404 and len(response.json()["error"]["message"]) < 400


def test_alias_reaches_the_route(gw: RunningGateway) -> None:
    raw = gw.anthropic("acme").messages.with_raw_response.create(
        model="claude-opus-5-5", max_tokens=50, messages=[{"role": "user", "content": "[[sim:text hi]]"}]
    )
    message = raw.parse()
    assert message.content[0].type == "text" and message.content[0].text == "hi"
    assert raw.headers["x-cachegate-model"] == "claude-sonnet-4-5"
    assert message.model == "claude-sonnet-4-5"  # the model that answered, as the provider names it
    assert gw.sim_requests(1)[-1]["body"]["model"] == "claude-sonnet-4-5"


def test_openai_sdk_global_alias_and_longest_pattern(gw: RunningGateway) -> None:
    client = gw.openai("globex")
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-5.6-luna", messages=[{"role": "user", "content": "[[sim:text ok]]"}]
    )
    assert raw.headers["x-cachegate-model"] == "gpt-4o-mini" and raw.parse().choices[0].message.content == "ok"
    raw = client.chat.completions.with_raw_response.create(
        model="exact-name", messages=[{"role": "user", "content": "[[sim:text ok]]"}]
    )
    assert raw.headers["x-cachegate-model"] == "slow"


def test_tenant_aliases_come_first(gw: RunningGateway) -> None:
    client = gw.openai("acme")
    # The global map sends gpt-6* to "flaky"; acme's exact entry wins.
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-6.1-sol", messages=[{"role": "user", "content": "[[sim:text ok]]"}]
    )
    assert raw.headers["x-cachegate-model"] == "gpt-4o-mini"
    # acme's "*" catches a name no global pattern knows, and also beats the global "gpt-*" (tenant first).
    for name in ("llama-4-maverick", "gpt-5.6-luna"):
        raw = client.chat.completions.with_raw_response.create(
            model=name, messages=[{"role": "user", "content": "[[sim:text ok]]"}]
        )
        assert raw.headers["x-cachegate-model"] == "claude-sonnet-4-5"
    # globex (no own map) gets the global map: gpt-6* -> flaky, which it may not use.
    with pytest.raises(openai.NotFoundError):
        gw.openai("globex").chat.completions.create(
            model="gpt-6.1-sol", messages=[{"role": "user", "content": "[[sim:text ok]]"}]
        )


def test_embedded_default_serves_each_clients_default_model() -> None:
    default = load_settings()
    routes = [m.model_dump() for m in default.models]
    with running_gateway(**gateway_settings(policy=OFF, models=routes, model_aliases=default.model_aliases)) as gw:
        for model in ("claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-5-5"):
            raw = gw.anthropic().messages.with_raw_response.create(
                model=model, max_tokens=20, messages=[{"role": "user", "content": "[[sim:text PONG]]"}]
            )
            assert raw.parse().content[0].text == "PONG"  # type: ignore[union-attr]
        assert raw.headers["x-cachegate-model"] == "claude-sonnet-4-5"
        for model in ("gpt-6.1-sol", "gpt-5.6-luna", "gemini-3.8-flash", "gemini-3.5-flash-lite"):
            answer = gw.openai().chat.completions.create(
                model=model, messages=[{"role": "user", "content": "[[sim:text PONG]]"}]
            )
            assert answer.choices[0].message.content == "PONG"
        embedded = gw.openai().embeddings.create(model="text-embedding-3-large", input="hi")
        assert len(embedded.data[0].embedding) == 1536  # text-embedding-3-small's, through the alias
