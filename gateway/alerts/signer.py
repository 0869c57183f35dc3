"""Webhook signatures, after Slack's v0 scheme: HMAC-SHA256 of `v0:<timestamp>:<body>` with the
destination's secret, sent as `x-cachegate-signature: v0=<hex>` beside `x-cachegate-timestamp`.
Receivers recompute it and refuse old timestamps (replays)."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "x-cachegate-signature"
TIMESTAMP_HEADER = "x-cachegate-timestamp"


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret, b"v0:%d:" % timestamp + body, hashlib.sha256).hexdigest()
    return f"v0={digest}"


def signed_headers(secret: bytes | None, timestamp: int, body: bytes) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    if secret is not None:
        headers[TIMESTAMP_HEADER] = str(timestamp)
        headers[SIGNATURE_HEADER] = signature(secret, timestamp, body)
    return headers
