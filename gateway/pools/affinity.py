"""Session affinity: which deployment holds a session's prompt-cache prefix, and how big it was.

Shared by replicas through the state store (Redis when configured), one key per (pool, session) that
expires with the provider's cache TTL, refreshed by every answer (a provider's cache entry is refreshed
by every read). Sessions are tenant-scoped by the caller and hashed here: a caller's id never becomes a
key as sent, and keys stay short. Bounded: by expiry in Redis, by the in-process store's own caps.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gateway.pools.model import Deployment
from gateway.state import Op


@dataclass(frozen=True, slots=True)
class Holder:
    """The deployment a session last ran on and its prompt's estimated tokens (the prefix cached there)."""

    deployment_id: str
    prefix_tokens: int


def _key(pool: str, session: str) -> str:
    digest = hashlib.sha256(session.encode()).hexdigest()[:32]
    return f"pools:{{{pool}}}:session:{digest}"


def read(pool: str, session: str) -> Op:
    return Op("get", _key(pool, session))


def parse(raw: bytes | None) -> Holder | None:
    if not raw:
        return None
    deployment_id, _, tokens = raw.decode(errors="replace").rpartition("\t")
    return Holder(deployment_id, int(tokens)) if deployment_id and tokens.isdigit() else None


def write(session: str, deployment: Deployment, prefix_tokens: int) -> Op:
    value = f"{deployment.id}\t{prefix_tokens}".encode()
    return Op("set", _key(deployment.pool, session), ttl_s=deployment.cache_ttl_s, values=(value,))
