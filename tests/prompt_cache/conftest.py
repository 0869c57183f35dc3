"""One gateway for the prompt-cache tests: embedded simulator, response cache off (every request must
reach the provider), tenants with different prompt-cache policies."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from gateway.config import hash_key
from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway

KEYS = {"acme": "sk-pc-acme", "plain": "sk-pc-plain", "reloc": "sk-pc-reloc"}
POLICIES: dict[str, dict[str, Any]] = {
    "acme": {},
    "plain": {"prompt_cache": {"enabled": False}},  # the client's own marks only
    "reloc": {"prompt_cache": {"relocate_volatile": True}},
}
SIM = "embedded-sim"
MODELS = [
    {"name": "claude-sonnet-4-5", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_base": SIM},
    {"name": "gemini-2.5-flash", "provider": "gemini", "model": "gemini-2.5-flash", "api_base": SIM},
    {
        "name": "claude-1h",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "api_base": SIM,
        "policy": {"prompt_cache": {"ttl": "1h"}},
    },
    {
        "name": "claude-min-3000",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "api_base": SIM,
        "policy": {"prompt_cache": {"min_tokens": 3000}},
    },
    {"name": "gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini", "api_base": SIM},
    {
        "name": "gpt-4o-mini-24h",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_base": SIM,
        "policy": {"prompt_cache": {"retention": "24h"}},
    },
]
_sessions = itertools.count()


def new_session() -> str:
    """A fresh session id per test (the gateway and the simulator are shared by the module)."""
    return f"pc-session-{next(_sessions)}"


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    settings = {
        "models": MODELS,
        "tenants": [{"name": name, "keys": [hash_key(key)], "policy": POLICIES[name]} for name, key in KEYS.items()],
        "admin_keys": [hash_key(ADMIN_KEY)],
        "policy": {"response_cache": {"enabled": False}},
        "max_body_bytes": 4 * 1024 * 1024,
    }
    with running_gateway(**settings) as gateway:
        yield gateway


def anthropic_client(gw: RunningGateway, tenant: str = "acme") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=KEYS[tenant], max_retries=0)


def openai_client(gw: RunningGateway, tenant: str = "acme") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=KEYS[tenant], max_retries=0)


def last_sim_body(gw: RunningGateway) -> dict[str, Any]:
    """The body of the last request that reached the simulated provider."""
    requests = gw.sim_requests(limit=1)
    body: dict[str, Any] = requests[-1]["body"]
    return body


def marks_in(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, mark) for every cache_control in an Anthropic body, in prompt order."""
    found: list[tuple[str, Any]] = []
    for index, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            found.append((f"tools.{index}", tool["cache_control"]))
    system = body.get("system")
    for index, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            found.append((f"system.{index}", block["cache_control"]))
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and "cache_control" in block:
                found.append((f"messages.{m}.{index}", block["cache_control"]))
    return found


def long_text(label: str, words: int = 1500) -> str:
    """Distinct text of roughly `words` tokens."""
    return " ".join(f"{label}{i}" for i in range(words))
