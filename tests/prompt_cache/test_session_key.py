"""OpenAI-style providers: prompt_cache_key = the agent session, only where the provider accepts it."""

from __future__ import annotations

from typing import Any

from gateway.config import ModelConfig
from gateway.config.prompt_cache import PromptCacheConfig
from gateway.prompt_cache import session_cache_key
from gateway.prompt_cache.optimizer import optimize
from gateway.prompt_cache.session import SessionState
from gateway.prompt_cache.session_key import tenant_cache_key
from tests.gateway_harness import RunningGateway
from tests.prompt_cache.conftest import last_sim_body, new_session, openai_client

HELLO: list[Any] = [{"role": "user", "content": "[[sim:text ok]] hello"}]


def test_openai_gets_the_session_as_prompt_cache_key(gw: RunningGateway) -> None:
    session = new_session()
    openai_client(gw).chat.completions.create(
        model="gpt-4o-mini", messages=HELLO, extra_headers={"x-session-id": session}
    )
    body = last_sim_body(gw)
    assert body["prompt_cache_key"] == session_cache_key(f"acme:{session}")
    assert session not in body["prompt_cache_key"] and "prompt_cache_retention" not in body


def test_no_session_no_key_and_a_clients_own_key_is_namespaced(gw: RunningGateway) -> None:
    client = openai_client(gw)
    client.chat.completions.create(model="gpt-4o-mini", messages=HELLO)
    assert "prompt_cache_key" not in last_sim_body(gw)
    client.chat.completions.create(model="gpt-4o-mini", messages=HELLO, extra_body={"prompt_cache_key": "mine"})
    # Namespaced with the tenant: two tenants sending the same key never share a provider cache bucket.
    assert last_sim_body(gw)["prompt_cache_key"] == tenant_cache_key("acme", "mine")


def test_retention_per_model_config(gw: RunningGateway) -> None:
    openai_client(gw).chat.completions.create(
        model="gpt-4o-mini-24h", messages=HELLO, extra_headers={"x-session-id": new_session()}
    )
    assert last_sim_body(gw)["prompt_cache_retention"] == "24h"


def test_key_never_reaches_other_providers(gw: RunningGateway) -> None:
    completion = openai_client(gw).chat.completions.create(
        model="claude-sonnet-4-5",
        messages=HELLO,
        extra_body={"prompt_cache_key": "mine", "prompt_cache_retention": "24h"},
    )
    assert completion.choices[0].message.content == "ok"
    body = last_sim_body(gw)
    assert "prompt_cache_key" not in body and "prompt_cache_retention" not in body
    assert "mine" not in str(body)


def test_gemini_never_gets_explicit_cache_marks() -> None:
    route = ModelConfig(name="gemini", provider="gemini", model="gemini-2.5-pro")
    body = {
        "model": "gemini",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]},
            {"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}},
        ],
        "prompt_cache_key": "k",
    }
    outcome = optimize(body, "openai", route, PromptCacheConfig(), SessionState(), "t:s", 0.0)
    assert "cache_control" not in str(outcome.body) and "prompt_cache_key" not in outcome.body
    assert "cache_control" in str(body)  # the caller's body is never modified
    allowed = optimize(body, "openai", route, PromptCacheConfig(gemini_explicit_cache=True), SessionState(), None, 0.0)
    assert "cache_control" in str(allowed.body)


def test_gemini_marks_are_taken_off_copies_of_the_anthropic_system_prompt() -> None:
    """Anthropic's wire to Gemini: the marks go from the system prompt's blocks, which are copied first."""
    route = ModelConfig(name="gemini", provider="gemini", model="gemini-2.5-pro")
    mark = {"type": "ephemeral"}
    body = {
        "model": "gemini",
        "system": [{"type": "text", "text": "sys", "cache_control": mark}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": mark}]}],
        "cache_control": mark,
    }
    outcome = optimize(body, "anthropic", route, PromptCacheConfig(), SessionState(), "t:s", 0.0)
    assert "cache_control" not in str(outcome.body)
    assert body["system"][0]["cache_control"] == mark and body["messages"][0]["content"][0]["cache_control"] == mark


def test_both_key_fields_are_stripped_for_other_providers() -> None:
    route = ModelConfig(name="claude", provider="anthropic", model="claude-sonnet-4-5")
    body = {"model": "claude", "messages": HELLO, "prompt_cache_key": "k", "prompt_cache_retention": "24h"}
    outcome = optimize(body, "openai", route, PromptCacheConfig(), SessionState(), "t:s", 0.0)
    assert "prompt_cache_key" not in outcome.body and "prompt_cache_retention" not in outcome.body
    assert outcome.key_action == "stripped"
