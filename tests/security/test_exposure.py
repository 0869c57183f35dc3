"""`cachegate serve` refuses a non-loopback address with a configuration anyone could abuse (issue #11,
items 2 and 6): the embedded simulator, a well-known key (the dev keys of gateway/default.yaml, the
placeholders of deploy/cachegate.yaml) or /metrics without a token, unless --insecure says so (then it
warns on every start).

The pure check (gateway/exposure.py) on the shipped configs, and the real command as a subprocess.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gateway.config import Settings, hash_key, load_settings
from gateway.exposure import exposure_problems, is_loopback
from tests.deploy.processes import answers_http, cachegate, own_environment, spawned
from tests.ports import spawn_port

REPO = Path(__file__).resolve().parents[2]
DEPLOY_CONFIG = REPO / "deploy" / "cachegate.yaml"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost", "LocalHost"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "10.0.0.5", "192.168.1.2", "fe80::1", "gateway.example"])
def test_addresses_that_may_be_reachable(host: str) -> None:
    assert not is_loopback(host)


def test_the_embedded_default_is_fine_on_loopback_only() -> None:
    assert exposure_problems(load_settings()) == []
    problems = exposure_problems(load_settings(host="0.0.0.0"))
    text = "\n".join(problems)
    assert "simulator" in text and "/metrics" in text
    assert "dev tenant key" in text and "dev admin key" in text
    assert "sk-cachegate" not in text  # the message names what a key is, never the key


def test_the_deploy_placeholders_are_refused() -> None:
    settings = load_settings(DEPLOY_CONFIG)
    assert settings.host == "0.0.0.0" and not settings.embedded_simulator
    text = "\n".join(exposure_problems(settings))
    for placeholder in ["tenant 'platform'", "tenant 'research'", "admin key", "metrics token"]:
        assert placeholder in text, placeholder


def replaced_keys(config: dict[str, Any]) -> dict[str, Any]:
    """deploy/cachegate.yaml with every key replaced by one nobody has published."""
    return {
        **config,
        "admin_keys": [hash_key("sk-admin-secret-1")],
        "metrics_tokens": [hash_key("sk-metrics-secret-1")],
        "tenants": [{**tenant, "keys": [hash_key(f"sk-{tenant['name']}-secret-1")]} for tenant in config["tenants"]],
    }


def test_the_deploy_config_with_its_own_keys_is_accepted() -> None:
    config = replaced_keys(yaml.safe_load(DEPLOY_CONFIG.read_text()))
    assert exposure_problems(Settings(**config)) == []
    without_token = Settings(**{**config, "metrics_tokens": []})
    assert [p for p in exposure_problems(without_token) if "/metrics" in p] == exposure_problems(without_token) != []
    with_sim = Settings(**{**config, "embedded_simulator": True})
    assert len(exposure_problems(with_sim)) == 1 and "simulator" in exposure_problems(with_sim)[0]


def test_serve_refuses_a_public_address_with_the_embedded_default() -> None:
    done = subprocess.run(
        cachegate("serve", "--host", "0.0.0.0", "--port", str(spawn_port())),
        cwd=REPO,
        env=own_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "refusing to serve on 0.0.0.0" in done.stderr and "simulator" in done.stderr
    assert "--insecure" in done.stderr and "listening" not in done.stderr


def test_serve_with_insecure_starts_and_warns(tmp_path: Path) -> None:
    port = spawn_port()
    argv = cachegate("serve", "--host", "0.0.0.0", "--port", str(port), "--insecure")
    with spawned("serve-insecure", argv, tmp_path) as process:
        process.wait_until(answers_http(f"http://127.0.0.1:{port}/healthz"))
        assert httpx.get(f"http://127.0.0.1:{port}/metrics").status_code == 401  # no token: not open either
        log = process.tail(10_000)
    assert "WARNING" in log and "--insecure" in log and "simulator" in log
