"""What an alert says: its kind, the tenant, the event's identity (what makes two alerts the same event)
and a few safe facts (reasons, amounts; never prompt content or keys)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_runtime.guard import Detection
from gateway.config.alerts import AlertEvent
from gateway.governance.budgets import Standing

MAX_FIELD = 128  # caller-chosen values (session ids) are cut to this


def _clip(value: str) -> str:
    return value[:MAX_FIELD]


@dataclass(frozen=True)
class Alert:
    kind: AlertEvent
    tenant: str
    identity: tuple[str, ...]  # with kind and tenant: the event (deduplicated across replicas)
    summary: str  # one line for people
    session: str | None = None
    reason: str | None = None
    amounts: dict[str, float] = field(default_factory=dict)

    @property
    def event_key(self) -> tuple[str, ...]:
        return (self.kind, self.tenant, *self.identity)

    def facts(self) -> dict[str, Any]:
        """The machine-readable part of the payload."""
        return {
            "event": self.kind,
            "tenant": self.tenant,
            "session": self.session,
            "reason": self.reason,
            "amounts": self.amounts,
        }


GUARD_KINDS: dict[str, AlertEvent] = {"stop": "guard_stop", "block": "guard_block"}


def guard_alert(action: str, tenant: str, session: str | None, detection: Detection) -> Alert | None:
    """The guard stopped or blocked a session (once per session and action); None for its other actions."""
    kind = GUARD_KINDS.get(action)
    if kind is None:
        return None
    session = _clip(session) if session is not None else None
    reason, detector = detection.reason.value, detection.detector
    return Alert(
        kind=kind,
        tenant=tenant,
        identity=(session or "(no session)",),
        summary=f"Loop guard: {action} of session {session or '(none)'} of tenant {tenant} ({reason}, {detector})",
        session=session,
        reason=f"{reason}/{detector}",
    )


def budget_alert(kind: AlertEvent, tenant: str, standing: Standing) -> Alert:
    """A budget passed its soft fraction (budget_soft) or its limit (budget_hard): once per budget and
    window period."""
    line, budget = standing.line, standing.line.budget
    ident = _clip(line.ident)
    period = standing.resets_at.isoformat() if standing.resets_at else "lifetime"
    amounts = {"used": round(standing.used, 4), "spent_tokens": float(standing.tokens)}
    if budget.usd is not None:
        amounts.update(spent_usd=round(standing.usd, 6), limit_usd=budget.usd)
    what = "spent" if kind == "budget_hard" else f"{standing.used:.0%} used"
    return Alert(
        kind=kind,
        tenant=tenant,
        identity=(line.scope, ident, budget.window, period),
        summary=f"Budget {what}: {line.scope} {ident} of tenant {tenant}, {budget.window} window",
        session=ident if line.scope == "session" else None,
        reason=f"{line.scope} {budget.window} budget",
        amounts=amounts,
    )


def cache_hit_drop(tenant: str, ratio: float, baseline: float, episode: str) -> Alert:
    """A tenant's cache-hit ratio fell below a fraction of its baseline (once until it recovers)."""
    return Alert(
        kind="cache_hit_drop",
        tenant=tenant,
        identity=(episode,),
        summary=f"Cache-hit ratio of tenant {tenant} fell to {ratio:.0%} (baseline {baseline:.0%})",
        reason="cache-hit ratio below its baseline",
        amounts={"ratio": round(ratio, 4), "baseline": round(baseline, 4)},
    )


def deployment_cooldown(model: str, deployment: str, reason: str, seconds: float, until: float) -> Alert:
    """A pool's deployment was rested (gateway/pools/health.py); `until` (epoch s) makes it one event."""
    return Alert(
        kind="deployment_cooldown",
        tenant="",
        identity=(model, deployment, str(int(until))),
        summary=f"Deployment {deployment} of {model} cooling down for {seconds:g} s ({reason})",
        reason=reason,
        amounts={"seconds": seconds},
    )
