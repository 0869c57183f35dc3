"""What a pool is: the deployments configured under one public model name, and their fallback pools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.config import ModelConfig

# Seconds a provider keeps an unused prompt-cache prefix (a session's affinity lasts as long): Anthropic's
# default entries live 5 minutes; OpenAI's 5 to 10 minutes; Gemini's implicit cache is best effort.
CACHE_TTL_S = {"anthropic": 300.0, "openai": 600.0, "azure": 600.0, "bedrock": 300.0, "vertex_ai": 300.0}
DEFAULT_CACHE_TTL_S = 300.0


@dataclass(frozen=True, slots=True, eq=False)  # by identity: a plan keys its standings by deployment
class Deployment:
    """One way to serve a pool's model: its id (from config, unique in its pool) and its route."""

    pool: str
    id: str
    route: ModelConfig

    @property
    def cache_ttl_s(self) -> float:
        return self.route.cache_ttl_s or CACHE_TTL_S.get(self.route.provider, DEFAULT_CACHE_TTL_S)


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    deployments: tuple[Deployment, ...]

    @property
    def fallbacks(self) -> list[str]:
        """The pools tried once this one is exhausted: every deployment's fallbacks, in order, once."""
        names = [name for d in self.deployments for name in d.route.fallbacks if name != self.name]
        return list(dict.fromkeys(names))


def build_pools(models: Sequence[ModelConfig]) -> dict[str, Pool]:
    """Configured models grouped by public name; a deployment without an id is `name#n` (n: its place)."""
    grouped: dict[str, list[ModelConfig]] = {}
    for model in models:
        grouped.setdefault(model.name, []).append(model)
    return {
        name: Pool(
            name, tuple(Deployment(name, route.deployment_id or f"{name}#{n}", route) for n, route in enumerate(routes))
        )
        for name, routes in grouped.items()
    }
