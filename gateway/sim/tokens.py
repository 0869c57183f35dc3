"""Token counting with tiktoken (offline encodings shipped by LiteLLM)."""

from __future__ import annotations

from functools import lru_cache

from gateway.offline import apply_offline_defaults
from gateway.tokenizer import pieces

apply_offline_defaults()

import tiktoken  # noqa: E402  (needs TIKTOKEN_CACHE_DIR from the offline defaults)

# Anthropic's tokenizer is not public: cl100k_base is the stated approximation for Claude models.
ANTHROPIC_ENCODING = "cl100k_base"


def openai_encoding(model: str) -> str:
    """o200k_base for current OpenAI models; cl100k_base only for the legacy GPT-4 / 3.5 family."""
    legacy = model.startswith(("gpt-3.5", "gpt-4-")) or model == "gpt-4"
    return "cl100k_base" if legacy else "o200k_base"


@lru_cache(maxsize=4)
def _encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def encode(text: str, encoding: str) -> list[int]:
    """Token ids of `text`; special-token text is counted as ordinary text, like the providers do. Encoded
    in bounded pieces (gateway/tokenizer.py), so a hostile run of letters costs linear time here too."""
    codec = _encoding(encoding)
    return [token for piece in pieces(text) for token in codec.encode(piece, disallowed_special=())]


def decode(tokens: list[int], encoding: str) -> str:
    return _encoding(encoding).decode(tokens)


def count_tokens(text: str, encoding: str) -> int:
    return len(encode(text, encoding))
