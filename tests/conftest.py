"""Suite-wide setup: offline defaults before anything imports litellm, tiktoken or transformers."""

import gateway  # noqa: F401
