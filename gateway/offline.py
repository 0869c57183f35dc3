"""Environment defaults that keep LiteLLM, tiktoken and sentence-transformers offline.

Must run before the first import of litellm or tiktoken: LiteLLM otherwise retries a download of its
cost map for ~10 s on every import, and tiktoken downloads its encodings on first use.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def litellm_tokenizer_dir() -> str | None:
    """The folder of tiktoken encodings (cl100k_base, o200k_base) that LiteLLM ships."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return str(folder) if folder.is_dir() else None


def apply_offline_defaults() -> None:
    """Set offline defaults unless the operator set them already."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tokenizers = litellm_tokenizer_dir()
    if tokenizers:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", tokenizers)
