"""Suite-wide setup: offline defaults before anything imports litellm, tiktoken or transformers."""

import os

import gateway  # noqa: F401

# Each test gateway's ledger in its own memory (tests that need a file or PostgreSQL name one), so no
# test's spend seeds another's budgets through a shared file.
os.environ.setdefault("CACHEGATE_LEDGER__URL", "sqlite://")
