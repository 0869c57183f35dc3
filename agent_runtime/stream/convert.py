"""A v2 stream part (`{"type", "ns", "data"[, "interrupts"]}`) as a protocol event."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agent_runtime.stream.protocol import ProtocolEvent, ProtocolEventParams


def convert_to_protocol_event(part: Mapping[str, Any]) -> ProtocolEvent:
    params: ProtocolEventParams = {
        "namespace": list(part["ns"]),
        "timestamp": int(time.time() * 1000),
        "data": part["data"],
    }
    if "interrupts" in part:
        params["interrupts"] = part["interrupts"]
    return {"type": "event", "method": part["type"], "params": params}
