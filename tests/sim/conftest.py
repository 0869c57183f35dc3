"""A shared simulator (default settings, zero latency) for the simulator's tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

import gateway  # noqa: F401  (offline defaults before litellm / tiktoken)
from gateway.config import hash_key
from gateway.sim import SimSettings, create_sim_app
from tests.servers import run_app_in_thread

SIM_ADMIN_KEY = "sk-sim-admin-test"
SIM_ADMIN = {"authorization": f"Bearer {SIM_ADMIN_KEY}"}  # the simulator's control endpoints need it


def sim_test_settings(**overrides: Any) -> SimSettings:
    """Simulator settings for tests: the test admin key guards the controls, the request log is on."""
    return SimSettings.model_validate(
        {"admin_key_hashes": [hash_key(SIM_ADMIN_KEY)], "record_requests": True, **overrides}
    )


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    with run_app_in_thread(create_sim_app(sim_test_settings())) as url:
        yield url


@pytest.fixture(autouse=True)
def _fresh_sim(request: pytest.FixtureRequest) -> None:
    if "sim_url" in request.fixturenames:
        httpx.post(request.getfixturevalue("sim_url") + "/sim/reset", headers=SIM_ADMIN).raise_for_status()


@pytest.fixture
def oai(sim_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim_url + "/v1", api_key="sk-test", max_retries=0)


@pytest.fixture
def claude(sim_url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=sim_url, api_key="sk-ant-test", max_retries=0)


def long_text(words: int, seed: str = "w") -> str:
    """Distinct words, so that tokens never merge across a change (roughly 2 tokens a word)."""
    return " ".join(f"{seed}{i}" for i in range(words))
