"""Client-facing API shapes."""

from gateway.wire.anthropic import ANTHROPIC
from gateway.wire.base import StreamAccumulator, WireFormat
from gateway.wire.openai import OPENAI

WIRES: dict[str, WireFormat] = {"openai": OPENAI, "anthropic": ANTHROPIC}

__all__ = ["ANTHROPIC", "OPENAI", "WIRES", "StreamAccumulator", "WireFormat"]
