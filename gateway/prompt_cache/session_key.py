"""The prompt_cache_key sent to OpenAI-style providers: never shared by two tenants.

For an agent session the gateway sends a key derived from the tenant-scoped session key (stable per
session, revealing neither the tenant nor the client's session id). A caller's own prompt_cache_key is
namespaced with its tenant before anything else sees it (stages/session.py), so tenants that send the
same value still land in different provider cache buckets and no caller can name another tenant's
bucket, not even by sending a value the gateway generated (that is namespaced again). The residual
channel is described in docs/security.md (prompt-cache side channel).
"""

from __future__ import annotations

import hashlib
from typing import Any

FIELD = "prompt_cache_key"


def session_cache_key(session_key: str) -> str:
    return "cg-" + hashlib.blake2b(session_key.encode(), digest_size=12).hexdigest()


def tenant_cache_key(tenant: str, value: str) -> str:
    """A caller-supplied prompt_cache_key in its tenant's namespace (length-prefixed: unambiguous)."""
    material = f"{len(tenant)}:{tenant}:{value}".encode()
    return "cgt-" + hashlib.blake2b(material, digest_size=12, person=b"cachegate-pck").hexdigest()


def with_tenant_cache_key(body: dict[str, Any], tenant: str) -> dict[str, Any]:
    """The body with its caller-supplied prompt_cache_key namespaced (a copy; the same body if none)."""
    value = body.get(FIELD)
    if not isinstance(value, str):
        return body
    return {**body, FIELD: tenant_cache_key(tenant, value)}
