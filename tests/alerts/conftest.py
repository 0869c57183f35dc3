"""Settings for the alert tests: one destination, signed with a secret from the environment, fast retries."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

import pytest

from tests.alerts.receiver import Delivery

SECRET_ENV = "CACHEGATE_TEST_ALERT_SECRET"
SECRET = "whsec-test-5f1d2c"


def alerts(url: str, monkeypatch: pytest.MonkeyPatch, **config: Any) -> dict[str, Any]:
    """The `alerts` setting: destination 'ops' at `url` (events: all unless config says)."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    destination = {"name": "ops", "url": url, "secret_env": SECRET_ENV, **config.pop("destination", {})}
    return {"destinations": [destination], "backoff_s": 0.05, "max_backoff_s": 0.2, **config}


def assert_signed(delivery: Delivery) -> None:
    """Slack's v0 scheme, recomputed here: HMAC-SHA256 over `v0:<timestamp>:<body>`."""
    timestamp = delivery.headers["x-cachegate-timestamp"]
    assert abs(time.time() - int(timestamp)) < 60
    expected = hmac.new(SECRET.encode(), f"v0:{timestamp}:".encode() + delivery.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(delivery.headers["x-cachegate-signature"], f"v0={expected}")
