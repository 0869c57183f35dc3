"""The compose stack's replicas, as docker-compose.yml, deploy/nginx.conf and deploy/prometheus.yml name them.

Adding a replica to the stack means adding its name here too (docs/deployment.md, "Scaling replicas").
"""

from __future__ import annotations

from typing import Any

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

from gateway.config import hash_key
from tests.deploy.processes import REPO
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}

REPLICAS = ["gateway-1", "gateway-2"]


def replica_config(sim_url: str, redis_url: str) -> dict[str, Any]:
    """deploy/cachegate.yaml with the providers' base URLs pointed at the simulator, the Redis URL at the
    test's redis-server, and the test keys."""
    config: dict[str, Any] = yaml.safe_load((REPO / "deploy" / "cachegate.yaml").read_text())
    for model in config["models"]:
        model["api_base"] = f"{sim_url}/v1" if model["provider"] == "openai" else sim_url
    config["redis_url"] = redis_url
    config["host"] = "127.0.0.1"
    config["tenants"] = [{"name": name, "keys": [hash_key(key)]} for name, key in TENANT_KEYS.items()]
    config["admin_keys"] = [hash_key(ADMIN_KEY)]
    return config


def answered(replica_url: str) -> float:
    """Requests a replica answered, from its own /metrics (all its workers' under --workers)."""
    text = httpx.get(f"{replica_url}/metrics", headers=ADMIN).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "cachegate_requests"
        for sample in family.samples
        if sample.name == "cachegate_requests_total"
    )
