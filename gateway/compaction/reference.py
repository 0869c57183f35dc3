"""The short reference that replaces a compacted tool result: what it was, its size, a preview, a handle.

Built from the result alone, so the same result always becomes the same bytes (the prefix cache holds).
"""

from __future__ import annotations

RETRIEVAL_TOOL = "retrieve_context"


def preview(text: str, chars: int) -> str:
    if len(text) <= 2 * chars:
        return text
    omitted = len(text) - 2 * chars
    return f"{text[:chars]}\n[... {omitted:,} characters omitted ...]\n{text[-chars:]}"


def reference(tool: str, text: str, tokens: int, handle: str, preview_chars: int, *, tool_offered: bool) -> str:
    how = f'{RETRIEVAL_TOOL}(handle="{handle}")' if tool_offered else f"GET /v1/context/{handle}"
    return (
        f"[cachegate: output of `{tool}` compacted: {len(text):,} characters, ~{tokens:,} tokens. "
        f"Full text: {how}]\n{preview(text, preview_chars)}"
    )
