"""Deployment pools: several deployments (keys, regions, providers) behind one model name, with sticky,
cache-aware routing, cooldowns and circuit breakers shared by replicas (docs/pools.md)."""

from gateway.pools.model import Deployment, Pool
from gateway.pools.planner import Placement, Plan, Pools

__all__ = ["Deployment", "Placement", "Plan", "Pool", "Pools"]
