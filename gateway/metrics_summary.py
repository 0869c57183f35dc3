"""A gateway's metrics boiled down to what it saved and stopped (for `cachegate demo` and /dashboard)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from agent_runtime.guard import Action

LADDER = [action.value for action in Action]  # the guard's rungs in escalation order: warn, nudge, stop, block


@dataclass
class Summary:
    requests: float = 0.0
    errors: float = 0.0
    cost_usd: float = 0.0
    cost_without_cache_usd: float = 0.0
    saved_usd: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    tokens: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    # Guard decisions that acted, by (action, detector, reason): each a fixed set, so few rows.
    guard: dict[tuple[str, str, str], float] = field(default_factory=lambda: defaultdict(float))
    response_cache_hits: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @property
    def prompt_cache_hit_ratio(self) -> float:
        total = sum(self.tokens[k] for k in ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h"))
        return self.tokens["cache_read"] / total if total else 0.0

    def guard_by_action(self) -> list[tuple[tuple[str, str, str], float]]:
        """Guard decisions in ladder order of their action, then most frequent (detector, reason) first."""

        def rung(item: tuple[tuple[str, str, str], float]) -> tuple[int, float]:
            (action, _, _), count = item
            return (LADDER.index(action) if action in LADDER else len(LADDER), -count)

        return sorted(self.guard.items(), key=rung)


def summarize(metrics_text: str) -> Summary:
    summary = Summary()
    for family in text_string_to_metric_families(metrics_text):
        for sample in family.samples:
            name, labels, value = sample.name, sample.labels, sample.value
            if name == "cachegate_requests_total":
                summary.requests += value
            elif name == "cachegate_errors_total":
                summary.errors += value
            elif name == "cachegate_cost_usd_total":
                summary.cost_usd += value
            elif name == "cachegate_cost_without_cache_usd_total":
                summary.cost_without_cache_usd += value
            elif name == "cachegate_saved_usd_total":
                summary.saved_usd[labels.get("source", "?")] += value
            elif name == "cachegate_cache_write_premium_usd_total":  # prompt-cache savings net of premiums
                summary.saved_usd["prompt_cache"] -= value
            elif name == "cachegate_tokens_total":
                summary.tokens[labels.get("kind", "?")] += value
            elif name == "cachegate_guard_decisions_total":
                summary.guard[(labels.get("action", "?"), labels.get("detector", "?"), labels.get("reason", "?"))] += (
                    value
                )
            elif name.startswith("cachegate_response_cache_hits") and name.endswith("_total"):
                summary.response_cache_hits[labels.get("tier", "?")] += value
    return summary


def difference(after: Summary, before: Summary) -> Summary:
    """What one gateway's counters gained between two summaries (e.g. one run of the demo)."""
    gained = Summary()
    for name in (item.name for item in fields(Summary)):
        now, then = getattr(after, name), getattr(before, name)
        if isinstance(now, dict):
            changed = {key: value - then.get(key, 0.0) for key, value in now.items()}
            getattr(gained, name).update({key: value for key, value in changed.items() if value})
        else:
            setattr(gained, name, now - then)
    return gained


def summarize_registry(registry: CollectorRegistry) -> Summary:
    return summarize(generate_latest(registry).decode())


def render(summary: Summary) -> str:
    lines = [
        f"requests answered        {summary.requests:,.0f}  (errors {summary.errors:,.0f})",
        f"spend                    ${summary.cost_usd:,.4f}"
        f"  (without prompt caching ${summary.cost_without_cache_usd:,.4f})",
        f"prompt-cache hit ratio   {summary.prompt_cache_hit_ratio:.1%} of input tokens read from cache",
    ]
    lines += [f"saved by {source:<16} ${value:,.4f}" for source, value in sorted(summary.saved_usd.items())]
    lines += [
        f"response cache {tier:<9} {value:,.0f} hits" for tier, value in sorted(summary.response_cache_hits.items())
    ]
    lines += [
        f"guard {action:<6} {detector} ({reason}) {value:,.0f}"
        for (action, detector, reason), value in summary.guard_by_action()
    ]
    return "\n".join(lines)
