"""Client-facing API shapes."""

from gateway.wire.anthropic import ANTHROPIC
from gateway.wire.base import StreamAccumulator, WireFormat
from gateway.wire.gemini import GEMINI
from gateway.wire.openai import OPENAI
from gateway.wire.responses import RESPONSES

WIRES: dict[str, WireFormat] = {"openai": OPENAI, "anthropic": ANTHROPIC, "responses": RESPONSES, "gemini": GEMINI}

__all__ = ["ANTHROPIC", "GEMINI", "OPENAI", "RESPONSES", "WIRES", "StreamAccumulator", "WireFormat"]
