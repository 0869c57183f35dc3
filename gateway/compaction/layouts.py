"""Every API shape compaction works on, by wire name (gateway/wire/)."""

from __future__ import annotations

from gateway.compaction.gemini_layout import GeminiLayout
from gateway.compaction.layout import AnthropicLayout, Layout, OpenAILayout
from gateway.compaction.responses_layout import ResponsesLayout

LAYOUTS: dict[str, Layout] = {
    layout.name: layout for layout in (OpenAILayout(), AnthropicLayout(), ResponsesLayout(), GeminiLayout())
}
