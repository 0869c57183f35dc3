"""Virtual API keys: the caller's key -> its tenant. Keys are compared by hash; none is kept in clear."""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gateway.config import Settings, TenantConfig, hash_key
from gateway.config.limits import Limits


def presented_key(headers: Mapping[str, str], query_key: str | None = None) -> str | None:
    """The key as OpenAI SDKs (Authorization: Bearer), Anthropic SDKs (x-api-key) or Google's (x-goog-api-key,
    or `?key=` on the Gemini API routes only, passed in as `query_key`) send it."""
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return headers.get("x-api-key") or headers.get("x-goog-api-key") or query_key or None


@dataclass(frozen=True, eq=False)
class KeyIdentity:
    """Who a request is: its key's id (safe to log and label; never the secret) and tenant, and the key's
    own limits and policy overrides on top of the tenant's."""

    id: str
    tenant: TenantConfig
    name: str = ""
    limits: Limits = field(default_factory=Limits)
    policy: dict[str, Any] = field(default_factory=dict)  # overrides merged over the tenant's
    managed: bool = False  # a managed key (its last use is recorded)


def config_key_id(digest: str) -> str:
    """The id of a key listed in the config file: a prefix of its hash (which is no secret)."""
    return "cfg-" + digest.removeprefix("sha256:")[:12]


def config_keys(tenants: list[TenantConfig]) -> dict[str, KeyIdentity]:
    """The keys listed in the config, by hash (replaced whole when the config changes, gateway/live/)."""
    return {digest: KeyIdentity(config_key_id(digest), tenant) for tenant in tenants for digest in tenant.keys}


class KeyRing:
    def __init__(self, settings: Settings) -> None:
        self.keys = config_keys(settings.tenants)
        self.admin_hashes = list(settings.admin_keys)
        # Managed keys (gateway/managed_keys.py): hash -> (identity, expiry), replaced whole on reload.
        self.managed: dict[str, tuple[KeyIdentity, float | None]] = {}

    def identify(self, key: str | None) -> KeyIdentity | None:
        if not key:
            return None
        digest = hash_key(key)
        found = self.keys.get(digest)
        if found is not None:
            return found
        managed = self.managed.get(digest)
        if managed is None:
            return None
        identity, expires_at = managed
        return identity if expires_at is None or expires_at > time.time() else None

    def tenant_for(self, key: str | None) -> TenantConfig | None:
        identity = self.identify(key)
        return identity.tenant if identity else None

    def is_admin(self, key: str | None) -> bool:
        if not key:
            return False
        digest = hash_key(key)
        return any(hmac.compare_digest(digest, admin) for admin in self.admin_hashes)
