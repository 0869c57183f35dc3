"""/metrics and /v1/models are not open (issue #11, item 6).

/metrics shows every tenant's traffic and spend: with a metrics token configured it needs that token (or an
admin key); with none it is open only on a loopback bind. /v1/models needs a tenant key and lists only the
models that tenant may use. The deployment's Prometheus sends the token the gateway expects.

Real parts: the gateway on loopback (tests/gateway_harness.py), the official SDKs, the deploy/ files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import yaml

from gateway.config import hash_key, load_settings
from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway, running_gateway

REPO = Path(__file__).resolve().parents[2]
METRICS_TOKEN = "sk-metrics-test-token"
ACME_MODELS = ["gpt-4o-mini", "claude-sonnet-4-5"]
NO_TOKEN: list[dict[str, str]] = [
    {},
    {"authorization": "Bearer sk-metrics-guess"},
    {"authorization": f"Bearer {TENANT_KEYS['acme']}"},
    {"x-api-key": TENANT_KEYS["globex"]},
]


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    tenants = [
        {"name": "acme", "keys": [hash_key(TENANT_KEYS["acme"])], "allowed_models": ACME_MODELS},
        {"name": "globex", "keys": [hash_key(TENANT_KEYS["globex"])]},
    ]
    with running_gateway(metrics_tokens=[hash_key(METRICS_TOKEN)], tenants=tenants) as gateway:
        yield gateway


def test_metrics_need_the_token_when_one_is_configured(gw: RunningGateway) -> None:
    gw.openai("globex").chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    for headers in NO_TOKEN:
        response = httpx.get(f"{gw.url}/metrics", headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert "cachegate_" not in response.text and "globex" not in response.text
    by_token = httpx.get(f"{gw.url}/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"})
    assert by_token.status_code == 200 and 'tenant="globex"' in by_token.text
    assert httpx.get(f"{gw.url}/metrics", headers=ADMIN_HEADERS).status_code == 200


def test_metrics_without_a_token_are_open_on_loopback_only() -> None:
    with running_gateway() as loopback:
        assert httpx.get(f"{loopback.url}/metrics").status_code == 200  # development on 127.0.0.1
    # Configured for 0.0.0.0 with no token (cachegate serve --insecure): closed but to admin keys.
    with running_gateway(host="0.0.0.0", embedded_simulator=True) as exposed:
        assert httpx.get(f"{exposed.url}/metrics").status_code == 401
        assert httpx.get(f"{exposed.url}/metrics", headers=ADMIN_HEADERS).status_code == 200


def test_models_need_a_tenant_key(gw: RunningGateway) -> None:
    for headers in [{}, {"authorization": "Bearer sk-guess"}, ADMIN_HEADERS]:
        response = httpx.get(f"{gw.url}/v1/models", headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert "gpt-4o-mini" not in response.text
        assert response.json()["error"]["type"] == "authentication_error"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{gw.url}/v1", api_key="sk-guess", max_retries=0).models.list()
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=gw.url, api_key="sk-guess", max_retries=0).models.list()


def test_models_lists_only_what_the_tenant_may_use(gw: RunningGateway) -> None:
    every = [m.name for m in gw.services.settings.models]
    assert set(every) > set(ACME_MODELS)
    assert [m.id for m in gw.openai("acme").models.list()] == ACME_MODELS
    assert [m.id for m in gw.anthropic("acme").models.list()] == ACME_MODELS
    assert [m.id for m in gw.openai("globex").models.list()] == every  # no allowed_models: all routes


def load_yaml(relative: str) -> Any:
    return yaml.safe_load((REPO / relative).read_text())


def test_the_deployments_prometheus_sends_the_gateways_metrics_token() -> None:
    """deploy/prometheus.yml sends a bearer token from a file compose mounts; its hash is a metrics token of
    deploy/cachegate.yaml (replacing one means replacing both)."""
    job = next(j for j in load_yaml("deploy/prometheus.yml")["scrape_configs"] if j["job_name"] == "cachegate")
    authorization = job["authorization"]
    assert authorization.get("type", "Bearer") == "Bearer" and "credentials" not in authorization
    mounted = {}
    for volume in load_yaml("docker-compose.yml")["services"]["prometheus"]["volumes"]:
        source, target = volume.split(":")[:2]
        mounted[target] = source
    token = (REPO / mounted[authorization["credentials_file"]]).read_text().strip()
    settings = load_settings(REPO / "deploy" / "cachegate.yaml")
    assert hash_key(token) in settings.metrics_tokens
