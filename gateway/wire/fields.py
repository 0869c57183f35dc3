"""What of a caller's request may reach a provider: each API's public body fields, and the vetted headers.

Everything else a caller sends stays in the gateway. LiteLLM reads dozens of its own keyword arguments
(`base_url`, `api_base`, `api_key`, `extra_headers`, `mock_response`, `model_list`, pricing overrides ...)
from the same dict as the request body, so an unlisted field is not harmless noise: it can choose where
the gateway connects and with which key. Unknown fields are dropped, not rejected: the provider may
accept fields newer than these lists, and the caller gets the answer it would get without them.

The lists are the request params of the official SDKs (openai 2.x `CompletionCreateParams` and
`ResponseCreateParams`, anthropic 2.x `MessageCreateParams` and the beta `MessageCreateParams`; for the
other endpoints, the params named above each list), body fields only: SDK arguments that the SDK sends
as headers (`betas`, `user_profile_id`, `workspace_id`) are not body fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

OPENAI_CHAT_FIELDS = frozenset(
    {
        "audio",
        "frequency_penalty",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "messages",
        "metadata",
        "modalities",
        "model",
        "moderation",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    }
)

# `previous_response_id` is the gateway's own (it stores responses and sends the full conversation:
# gateway/responses_store.py), so no provider needs a store of its own. `client_metadata` is not in the SDK
# but Codex sends it to api.openai.com, which takes it.
OPENAI_RESPONSES_FIELDS = frozenset(
    {
        "background",
        "client_metadata",
        "context_management",
        "conversation",
        "include",
        "input",
        "instructions",
        "max_output_tokens",
        "max_tool_calls",
        "metadata",
        "model",
        "moderation",
        "parallel_tool_calls",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "truncation",
        "user",
    }
)

ANTHROPIC_MESSAGES_FIELDS = frozenset(
    {
        "cache_control",
        "container",
        "diagnostics",
        "inference_geo",
        "max_tokens",
        "messages",
        "metadata",
        "model",
        "output_config",
        "service_tier",
        "speed",
        "stop_sequences",
        "stream",
        "system",
        "thinking",
        "tool_choice",
        "tools",
        # Sampling parameters the API still takes for the models that support them.
        "temperature",
        "top_k",
        "top_p",
        # Beta fields (enabled by an anthropic-beta header).
        "billing_policy",
        "compaction",
        "context_management",
        "fallback_credit_token",
        "fallbacks",
        "mcp_servers",
        "thread",
    }
)

# anthropic 2.x `MessageCountTokensParams` and its beta variant (body fields only).
ANTHROPIC_COUNT_TOKENS_FIELDS = frozenset(
    {
        "billing_policy",
        "cache_control",
        "compaction",
        "context_management",
        "mcp_servers",
        "messages",
        "model",
        "output_config",
        "speed",
        "system",
        "thinking",
        "tool_choice",
        "tools",
    }
)

# openai 2.x `EmbeddingCreateParams`.
OPENAI_EMBEDDINGS_FIELDS = frozenset({"dimensions", "encoding_format", "input", "model", "user"})

# openai 2.x `CompletionCreateParams` (legacy completions).
OPENAI_COMPLETIONS_FIELDS = frozenset(
    {
        "best_of",
        "echo",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_tokens",
        "model",
        "n",
        "presence_penalty",
        "prompt",
        "seed",
        "stop",
        "stream",
        "stream_options",
        "suffix",
        "temperature",
        "top_p",
        "user",
    }
)

# Request headers a caller may send on to the provider: they select API versions and beta features.
FORWARDED_HEADERS = ("anthropic-beta", "anthropic-version", "openai-beta")
MAX_HEADER_VALUE_CHARS = 1024
# Visible ASCII and inner single spaces: no CR/LF/NUL or other control bytes, no leading/trailing space.
_HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x21-\x7e]| (?=[\x21-\x7e]))*")


def public_fields(body: Mapping[str, Any], allowed: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
    """The body with only the API's public fields, and the names of the fields left out."""
    kept = {k: v for k, v in body.items() if k in allowed}
    return kept, [k for k in body if k not in allowed]


def forwarded_headers(incoming: Mapping[str, str]) -> dict[str, str]:
    """The caller's API-version and beta headers that are safe to send on: known names only, lower-cased,
    one value of visible ASCII (a value that could split or inject a header is dropped)."""
    vetted: dict[str, str] = {}
    for name in FORWARDED_HEADERS:
        value = incoming.get(name)
        if isinstance(value, str) and len(value) <= MAX_HEADER_VALUE_CHARS and _HEADER_VALUE.fullmatch(value.strip()):
            vetted[name] = value.strip()
    return vetted


# The Gemini API's generateContent body (google-genai 3.x `_GenerateContentParameters_to_mldev`): the
# model is in the URL path, never in the body.
GEMINI_GENERATE_FIELDS = frozenset(
    {
        "cachedContent",
        "contents",
        "generationConfig",
        "labels",
        "safetySettings",
        "serviceTier",
        "store",
        "systemInstruction",
        "toolConfig",
        "tools",
    }
)
