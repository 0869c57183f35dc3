"""The routing decision over one pool, from each deployment's standing (pure: no I/O).

A session stays on the deployment holding its prefix while that one is not cooling down and has at least
`min_headroom` of its rate limits left. Otherwise (and for a new session) the pick is weighted at random,
by weight x headroom, among the available deployments with `min_headroom` left (all available ones when
none has) of the lowest priority among them. The rest
follow as failover order: available ones by priority and weighted headroom, then, only if none of the
pool is available, the cooling ones, the soonest free first (a pool never refuses what its provider
might still answer).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gateway.pools.health import Standing
from gateway.pools.model import Deployment

FLOOR_SHARE = 0.001  # a deployment with no headroom left still has a (tiny) chance when all are spent


@dataclass(frozen=True, slots=True)
class Choice:
    order: list[Deployment]
    reason: str  # sticky | new | balanced | moved:<why> | cooling (the whole pool is cooling down)


def choose(
    standings: dict[Deployment, Standing],
    holder_id: str | None,
    *,
    now: float,
    min_headroom: float,
    rng: random.Random,
) -> Choice:
    available = [d for d, s in standings.items() if not s.cooling(now)]
    if not available:
        cooling = sorted(standings, key=lambda d: standings[d].cooling_until)
        return Choice(cooling, "cooling")
    holder = next((d for d in standings if d.id == holder_id), None)
    if holder in available and standings[holder].headroom >= min_headroom:
        return Choice([holder, *_ranked([d for d in available if d is not holder], standings)], "sticky")
    # Deployments near their rate limit take no new sessions while another one has room.
    roomy = [d for d in available if standings[d].headroom >= min_headroom] or available
    top = min(d.route.priority for d in roomy)
    tier = [d for d in roomy if d.route.priority == top]
    weights = [_weight(d, standings[d]) for d in tier]
    first = rng.choices(tier, weights=weights)[0]
    rest = _ranked([d for d in available if d is not first], standings)
    if holder_id is None:
        return Choice([first, *rest], "new")
    if holder is None:
        why = "gone"  # the deployment left the configuration
    elif holder not in available:
        why = "cooldown"  # a 429's retry-after, a failure's rest or an open circuit
    else:
        why = "no_headroom"
    return Choice([first, *rest], f"moved:{why}")


def _weight(deployment: Deployment, standing: Standing) -> float:
    return deployment.route.weight * max(standing.headroom, FLOOR_SHARE)


def _ranked(deployments: list[Deployment], standings: dict[Deployment, Standing]) -> list[Deployment]:
    return sorted(deployments, key=lambda d: (d.route.priority, -_weight(d, standings[d])))
