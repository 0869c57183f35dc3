"""Is a configuration safe to serve beyond this machine? The problems `cachegate serve` refuses to start with
on a non-loopback address (unless --insecure): the embedded simulator, well-known keys, an open /metrics."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from gateway.config import Settings, hash_key

# Keys published in this repository, by hash: anyone who reads the README or deploy/ knows them.
WELL_KNOWN_KEYS: dict[str, str] = {
    hash_key("sk-cachegate-dev"): "the dev tenant key of the embedded default (gateway/default.yaml)",
    hash_key("sk-cachegate-admin"): "the dev admin key of the embedded default (gateway/default.yaml)",
    hash_key("sk-platform-change-me"): "a placeholder tenant key of deploy/cachegate.yaml",
    hash_key("sk-research-change-me"): "a placeholder tenant key of deploy/cachegate.yaml",
    hash_key("sk-admin-change-me"): "the placeholder admin key of deploy/cachegate.yaml",
    hash_key("sk-metrics-change-me"): "the placeholder metrics token of deploy/cachegate.yaml",
}


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`; anything else (0.0.0.0, ::, a name, an interface) may be reachable."""
    name = host.strip().removeprefix("[").removesuffix("]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _configured_keys(settings: Settings) -> Iterator[tuple[str, str]]:
    """(what it is, its hash) for every key the configuration accepts."""
    for digest in settings.admin_keys:
        yield "an admin key (admin_keys)", digest
    for tenant in settings.tenants:
        for digest in tenant.keys:
            yield f"a key of tenant {tenant.name!r}", digest
    for digest in settings.metrics_tokens:
        yield "a metrics token (metrics_tokens)", digest


def exposure_problems(settings: Settings) -> list[str]:
    """Why serving `settings` on `settings.host` would expose it; empty on loopback or when it is safe."""
    if is_loopback(settings.host):
        return []
    problems: list[str] = []
    if settings.embedded_simulator:
        problems.append(
            "the embedded provider simulator is on (embedded_simulator): it answers with fake replies and is "
            "meant for local development; route models to real providers"
        )
    for what, digest in _configured_keys(settings):
        known = WELL_KNOWN_KEYS.get(digest)
        if known:
            problems.append(f"{what} is {known}; replace it with a secret one (cachegate hash-key <new key>)")
    if not settings.metrics_tokens:
        problems.append(
            "/metrics has no token (metrics_tokens): set one, hashed with cachegate hash-key, and send it "
            "from the scraper as a bearer token"
        )
    return problems
