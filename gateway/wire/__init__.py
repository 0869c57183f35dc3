"""Client-facing API shapes."""

from gateway.wire.anthropic import ANTHROPIC
from gateway.wire.base import StreamAccumulator, WireFormat
from gateway.wire.gemini import GEMINI
from gateway.wire.openai import OPENAI

WIRES: dict[str, WireFormat] = {"openai": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI}

__all__ = ["ANTHROPIC", "GEMINI", "OPENAI", "WIRES", "StreamAccumulator", "WireFormat"]
