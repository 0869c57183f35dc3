"""OpenAI's embeddings API as the gateway reads it: the chat API's errors and usage, and no output."""

from __future__ import annotations

from typing import Any

from gateway.wire.openai import OpenAIChat


class OpenAIEmbeddings(OpenAIChat):
    def output_cap(self, body: dict[str, Any]) -> int | None:
        return 0  # an embedding generates no tokens: budgets and tokens per minute hold its input only


OPENAI_EMBEDDINGS = OpenAIEmbeddings()
