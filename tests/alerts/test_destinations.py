"""Alerts go only to the operator's configured destinations: no header, body field, session id or tenant
setting can point them elsewhere, a receiver's redirect is not followed, and a destination that is not an
http(s) URL (or whose signing secret is missing) is refused when the config loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from gateway.config import Settings, load_settings
from gateway.config.loading import ConfigError
from tests.alerts.conftest import SECRET_ENV, alerts
from tests.alerts.receiver import webhook_receiver
from tests.alerts.test_webhooks import stop_then_block
from tests.gateway_harness import gateway_settings, running_gateway
from tests.guard_stage.conftest import guard_settings
from tests.security.upstream_probe import trap_listener


def test_no_caller_or_redirect_makes_the_gateway_call_another_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        trap_listener(status=200) as trap,
        webhook_receiver(redirect_to=f"{trap.url}/redirected") as receiver,
        running_gateway(**guard_settings(alerts=alerts(receiver.url, monkeypatch))) as gw,
    ):
        hostile = {
            "x-cachegate-alert-url": trap.url,
            "x-cachegate-webhook": trap.url,
            "x-webhook-url": trap.url,
            "x-slack-webhook": trap.url,
        }
        fields = {"webhook_url": trap.url, "alerts": {"url": trap.url}, "metadata": {"alert_url": trap.url}}
        stop_then_block([gw], f"<!channel> {trap.url}/session", hostile, **fields)
        stops, blocks = receiver.wait_for_each("guard_stop", "guard_block")
    assert len(stops) == 1 and len(blocks) == 1  # each tried once: a 307 is neither followed nor retried
    assert trap.hits == []
    assert b"<!channel>" not in stops[0].body  # Slack would read it as a mention of everyone


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL", "http://", "hooks/x"])
def test_a_destination_must_be_an_http_url(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    good = alerts("https://hooks.example.com/cachegate", monkeypatch)
    assert Settings(**gateway_settings(alerts=good)).alerts.destinations[0].name == "ops"
    with pytest.raises(ValidationError, match="http:// or https:// URL"):
        Settings(**gateway_settings(alerts={**good, "destinations": [{**good["destinations"][0], "url": url}]}))


def test_a_missing_signing_secret_or_a_tenant_destination_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = alerts("https://hooks.example.com/cachegate", monkeypatch)
    monkeypatch.delenv(SECRET_ENV)
    with pytest.raises(ValidationError, match=f"environment variable {SECRET_ENV}"):
        Settings(**gateway_settings(alerts=config))
    config_file = tmp_path / "cachegate.yaml"
    tenant = {"name": "acme", "keys": [], "alerts": {"destinations": [{"name": "x", "url": "http://127.0.0.1:1/"}]}}
    config_file.write_text(yaml.safe_dump({"tenants": [tenant]}))
    with pytest.raises(ConfigError, match="unknown setting") as refused:  # tenants have no say in where alerts go
        load_settings(config_file)
    assert "alerts" in str(refused.value) and "\n" not in str(refused.value)
