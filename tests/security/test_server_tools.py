"""Provider tools reach only their own provider's routes, and never a model or address we did not choose.

On another provider's route LiteLLM runs some of them itself: the Anthropic `advisor_20260301` tool made it
call the model (and api_base, with a key) that the tool named, in a loop, unmetered. An MCP tool names a
server URL and its credentials. Refusals are a 400 in the caller's shape that clients do not retry.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.security.upstream_probe import Trap, assert_refused, keyed_settings, last_provider_request, trap_listener


@pytest.fixture(scope="module")
def trap() -> Iterator[Trap]:
    with trap_listener() as trap:
        yield trap


@pytest.fixture(scope="module", params=["lean", "litellm"])
def gateway(request: pytest.FixtureRequest) -> Iterator[RunningGateway]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        settings = keyed_settings(request.param, monkeypatch, policy={"response_cache": {"enabled": False}})
        with running_gateway(**settings) as gw:
            yield gw


def provider_calls(gw: RunningGateway) -> int:
    stats = gw.sim_stats()
    return int(stats["totals"].get("requests", 0)) + sum(int(n) for n in stats["errors"].values())


# The simulated model calls the advisor after every answer (an executor that keeps asking).
ASK_ADVISOR = '[[sim:loop advisor {"question": "what next?"}]]'


def advisor(model: str) -> dict[str, Any]:
    """The advisor tool of the finding: a model of the caller's choosing, in a loop of 200."""
    return {"type": "advisor_20260301", "name": "advisor", "model": model, "max_uses": 200}


def ask_anthropic(
    gw: RunningGateway, model: str, tools: list[Any], *, stream: bool = False, ask: str = "", **fields: Any
) -> Any:
    prompt = f"server tools {uuid.uuid4().hex} {ask}"
    messages: Any = [{"role": "user", "content": prompt}]
    client = gw.anthropic()
    if stream:
        with client.messages.stream(model=model, max_tokens=32, messages=messages, tools=tools, **fields) as events:
            return events.get_final_message()
    return client.messages.create(model=model, max_tokens=32, messages=messages, tools=tools, **fields)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_advisor_on_another_providers_route_calls_nothing(
    gateway: RunningGateway, trap: Trap, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finding: Anthropic wire, OpenAI route; LiteLLM ran the advisor loop itself and called the model
    the tool named with the provider key and address from the environment (here: the trap's)."""
    monkeypatch.setenv("OPENAI_API_BASE", trap.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    before, hits = provider_calls(gateway), len(trap.hits)
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask_anthropic(gateway, "gpt-4o-mini", [advisor("openai/gpt-unconfigured")], stream=stream, ask=ASK_ADVISOR)
    assert_refused(caught, "advisor_20260301")
    assert trap.hits[hits:] == []
    assert provider_calls(gateway) == before


def test_advisor_on_its_providers_route_only_with_a_configured_model(gateway: RunningGateway) -> None:
    before = provider_calls(gateway)
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask_anthropic(gateway, "claude-sonnet-4-5", [advisor("claude-opus-4-1")])
    assert_refused(caught, "claude-opus-4-1")
    assert provider_calls(gateway) == before
    # Naming a model the gateway serves, it goes to the provider as sent (the provider runs it).
    tool = {"type": "advisor_20260301", "name": "advisor", "model": "claude-sonnet-4-5", "max_uses": 2}
    ask_anthropic(gateway, "claude-sonnet-4-5", [tool])
    assert tool in last_provider_request(gateway)["body"]["tools"]


@pytest.mark.parametrize(
    ("tool", "named"),
    [
        ({"type": "web_search_20250305", "name": "web_search", "max_uses": 500}, "web_search_20250305"),
        ({"type": "code_execution_20250825", "name": "code_execution"}, "code_execution_20250825"),
        ({"type": "bash_20250124", "name": "bash"}, "bash_20250124"),
    ],
    ids=["web_search", "code_execution", "bash"],
)
def test_anthropic_tools_stay_on_anthropic_routes(gateway: RunningGateway, tool: dict[str, Any], named: str) -> None:
    function = {"name": "lookup", "description": "d", "input_schema": {"type": "object", "properties": {}}}
    before = provider_calls(gateway)
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask_anthropic(gateway, "gpt-4o-mini", [function, tool])
    assert_refused(caught, named)
    assert provider_calls(gateway) == before
    # The caller's own tools still go anywhere; the provider's own tools to its own routes, unchanged.
    ask_anthropic(gateway, "gpt-4o-mini", [function])
    ask_anthropic(gateway, "claude-sonnet-4-5", [function, tool])
    assert tool in last_provider_request(gateway)["body"]["tools"]


def test_mcp_servers_stay_on_anthropic_routes(gateway: RunningGateway, trap: Trap) -> None:
    servers = [{"type": "url", "url": trap.url, "name": "mcp", "authorization_token": "t"}]
    before, hits = provider_calls(gateway), len(trap.hits)
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask_anthropic(gateway, "gpt-4o-mini", [], extra_body={"mcp_servers": servers})
    assert_refused(caught, "mcp_servers")
    assert provider_calls(gateway) == before
    assert trap.hits[hits:] == []


def test_mcp_server_url_on_the_responses_wire_is_never_reached(gateway: RunningGateway, trap: Trap) -> None:
    mcp = {"type": "mcp", "server_label": "x", "server_url": trap.url, "authorization": "Bearer stolen",
           "require_approval": "never"}  # fmt: skip
    before, hits = provider_calls(gateway), len(trap.hits)
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.openai().responses.create(model="claude-sonnet-4-5", input="use the tool", tools=[mcp])  # type: ignore[list-item]
    assert_refused(caught, "mcp")
    assert provider_calls(gateway) == before
    # On OpenAI's own route it is OpenAI's to run: sent as is (the simulated provider connects nowhere).
    gateway.openai().responses.create(model="gpt-4o-mini", input="use the tool", tools=[mcp])  # type: ignore[list-item]
    assert mcp in last_provider_request(gateway)["body"]["tools"]
    assert trap.hits[hits:] == []


def test_a_fallback_on_another_provider_never_gets_the_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The primary may take the tool; a fallback to another provider is skipped, its error is answered."""
    settings = keyed_settings("auto", monkeypatch, policy={"response_cache": {"enabled": False}})
    claude = next(model for model in settings["models"] if model["name"] == "claude-sonnet-4-5")
    settings["models"].append({**claude, "name": "claude-then-gpt", "retries": 0, "fallbacks": ["gpt-4o-mini"]})
    with running_gateway(**settings) as gw:
        gw.queue_faults("529", model="claude-sonnet-4-5")
        tool = {"type": "web_search_20250305", "name": "web_search"}
        with pytest.raises(anthropic.APIStatusError) as caught:
            ask_anthropic(gw, "claude-then-gpt", [tool])
        assert caught.value.status_code == 529
        assert provider_calls(gw) == 1  # the primary's; the fallback was not called
