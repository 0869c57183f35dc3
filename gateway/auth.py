"""Virtual API keys: the caller's key -> its tenant. Keys are compared by hash; none is kept in clear."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from gateway.config import Settings, TenantConfig, hash_key


def presented_key(headers: Mapping[str, str], query_key: str | None = None) -> str | None:
    """The key as OpenAI SDKs (Authorization: Bearer), Anthropic SDKs (x-api-key) or Google's (x-goog-api-key,
    or `?key=` on the Gemini API routes only, passed in as `query_key`) send it."""
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return headers.get("x-api-key") or headers.get("x-goog-api-key") or query_key or None


class KeyRing:
    def __init__(self, settings: Settings) -> None:
        self.tenants: dict[str, TenantConfig] = {key: t for t in settings.tenants for key in t.keys}
        self.admin_hashes = list(settings.admin_keys)

    def tenant_for(self, key: str | None) -> TenantConfig | None:
        return self.tenants.get(hash_key(key)) if key else None

    def is_admin(self, key: str | None) -> bool:
        if not key:
            return False
        digest = hash_key(key)
        return any(hmac.compare_digest(digest, admin) for admin in self.admin_hashes)
