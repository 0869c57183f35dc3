"""The webhook body: Slack-compatible (`text` and `blocks`, which Slack incoming webhooks post as is)
plus a `cachegate` object for machines."""

from __future__ import annotations

import time

import orjson

from gateway.alerts.events import Alert


def slack_escape(text: str) -> str:
    """Slack reads `<...>` as links and mentions (`<!channel>`): a session id must not ping anyone."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def payload(alert: Alert) -> bytes:
    text = slack_escape(alert.summary)
    body = {
        "text": text,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": f"*cachegate* {text}"}}],
        "cachegate": {**alert.facts(), "at": round(time.time(), 3)},
    }
    return orjson.dumps(body)
