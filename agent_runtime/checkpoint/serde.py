"""Serialization for persistent checkpointers: pickle, so any state value (pydantic models, message
objects, sets) round-trips. Only point a checkpointer at a store you trust: loading runs pickle."""

from __future__ import annotations

import pickle
from typing import Any

PROTOCOL = 5


def dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=PROTOCOL)


def loads(data: bytes) -> Any:
    return pickle.loads(data)
