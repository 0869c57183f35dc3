"""The prompt_cache_key sent for an agent session: stable per session, revealing neither the tenant
nor the client's session id to the provider."""

from __future__ import annotations

import hashlib


def session_cache_key(session_key: str) -> str:
    return "cg-" + hashlib.blake2b(session_key.encode(), digest_size=12).hexdigest()
