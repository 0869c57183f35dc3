"""GuardConfig (per tenant / model, plus the request's header preset) -> agent_runtime.guard.GuardPolicy."""

from __future__ import annotations

from dataclasses import replace

from agent_runtime.guard import Action, GuardLimits, GuardPolicy, GuardThresholds
from gateway.config.guard import GuardConfig

WARN_ONLY = "warn-only"
OFF = "off"
_ACTIONS = {action.value: action for action in Action}


def core_policy(config: GuardConfig, preset: str | None = None) -> GuardPolicy:
    """The core policy for a config; ``preset`` is the x-cachegate-guard-policy value, if one applies."""
    rungs = (Action.WARN,) if preset == WARN_ONLY else tuple(_ACTIONS[rung] for rung in config.rungs)
    return GuardPolicy(
        enabled=config.enabled and preset != OFF,
        thresholds=GuardThresholds(**config.thresholds.model_dump()),
        limits=GuardLimits(**config.limits.model_dump()),
        rungs=rungs,
        strike_memory=config.strike_memory,
    )


def sessionless_policy(policy: GuardPolicy) -> GuardPolicy:
    """Without a session there are no stored strikes and no counters: the ladder without BLOCK (nothing
    could enforce it), judged from the history alone (``evaluate_history``), and of the limits only the
    one the history itself shows (consecutive errors)."""
    rungs = tuple(rung for rung in policy.rungs if rung is not Action.BLOCK)
    limits = GuardLimits(None, None, None, None, None, policy.limits.max_consecutive_errors)
    return replace(policy, rungs=rungs, limits=limits)


class PolicyCache:
    """Core policies by (config object, preset): PolicyConfig objects are cached per (model, tenant)."""

    def __init__(self) -> None:
        self._policies: dict[tuple[int, str | None], tuple[GuardConfig, GuardPolicy]] = {}

    def get(self, config: GuardConfig, preset: str | None) -> GuardPolicy:
        key = (id(config), preset)
        hit = self._policies.get(key)
        if hit is not None and hit[0] is config:
            return hit[1]
        policy = core_policy(config, preset)
        if len(self._policies) > 1024:  # configs are few; a leak would mean uncached PolicyConfigs
            self._policies.clear()
        self._policies[key] = (config, policy)
        return policy
