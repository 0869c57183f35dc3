"""cachegate: a prompt-caching LLM gateway with an agent loop guard."""

from gateway.offline import apply_offline_defaults

apply_offline_defaults()

__version__ = "0.1.0"
