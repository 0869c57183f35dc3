"""Semantic tier end to end: near-duplicates served across replicas, scopes and the verifier respected."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.semantic import DEFAULT_SIMILARITY_THRESHOLD
from tests.gateway_harness import RunningGateway
from tests.response_cache.conftest import Replicas, metric

PARAPHRASE = ("How do I reverse a list in Python?", "How can I reverse a list in Python?")
MADANG = (
    "Madang was built by Evans Deakin at Brisbane, launched on 10 August 1968, and commissioned on 28 November 1968."
)
BAUMGARTNER = (
    "Alexander Baumgartner (born June 27, 1841 in St. Gallen, Switzerland; died in 1910 in Luxembourg) was a poet "
    "and writer on the history of literature."
)
# Pairs the embedding scores above the default threshold although the answer differs.
MUST_MISS = [
    (MADANG, MADANG.replace("28 November", "29 November"), "numbers"),
    ("Is it safe to drink tap water in Mexico?", "Is it not safe to drink tap water in Mexico?", "negation"),
    (BAUMGARTNER, BAUMGARTNER.replace("Luxembourg", "Belgium"), "entity"),
]


def ask(gw: RunningGateway, prompt: str, namespace: str, tenant: str = "acme", **kwargs: Any) -> tuple[str, str, str]:
    """(x-cachegate-cache, x-cachegate-similarity, answer) of a temperature-0 OpenAI request."""
    headers = {"x-cachegate-cache-namespace": namespace, **kwargs.pop("extra_headers", {})}
    messages = [*kwargs.pop("before", []), {"role": "user", "content": prompt}]
    kwargs.setdefault("temperature", 0)
    raw = gw.openai(tenant).chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=messages, extra_headers=headers, **kwargs
    )
    return (
        raw.headers["x-cachegate-cache"],
        raw.headers.get("x-cachegate-similarity", ""),
        raw.parse().choices[0].message.content or "",
    )


def test_paraphrase_served_by_the_other_replica(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    assert ask(replicas.a, original, namespace)[0] == "miss"
    tier, similarity, answer = ask(replicas.b, paraphrase, namespace)
    assert (tier, answer) == ("semantic", original)  # the simulator echoed the original prompt
    assert DEFAULT_SIMILARITY_THRESHOLD <= float(similarity) < 1


def test_tenants_are_isolated(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    assert ask(replicas.a, original, namespace, tenant="acme")[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, tenant="globex") == ("miss", "", paraphrase)
    assert ask(replicas.b, paraphrase, namespace, tenant="acme")[0] == "semantic"


def test_scope_isolation(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    system = [{"role": "system", "content": "Answer in French."}]
    history = [{"role": "user", "content": "I use Rust."}, {"role": "assistant", "content": "Noted."}]
    tools: list[Any] = [{"type": "function", "function": {"name": "run", "parameters": {"type": "object"}}}]
    assert ask(replicas.a, original, namespace)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, before=system)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, before=history)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, tools=tools)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, max_tokens=50)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace)[0] == "semantic"


@pytest.mark.parametrize(("cached", "asked", "check"), MUST_MISS, ids=[c for _, _, c in MUST_MISS])
def test_verifier_rejects(replicas: Replicas, namespace: str, cached: str, asked: str, check: str) -> None:
    before = metric(replicas.b, "cachegate_response_cache_verifier_rejections_total", check=check)
    assert ask(replicas.a, cached, namespace)[0] == "miss"
    assert ask(replicas.b, asked, namespace) == ("miss", "", asked)
    assert metric(replicas.b, "cachegate_response_cache_verifier_rejections_total", check=check) == before + 1


def test_temperature_needs_opt_in(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    opt_in = {"x-cachegate-cache-semantic": "on"}
    assert ask(replicas.a, original, namespace, temperature=0.7, extra_headers=opt_in)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, temperature=0.7)[0] == "miss"
    another = "How would I reverse a list in Python?"
    off = {"x-cachegate-cache-semantic": "off", "cache-control": "no-store"}
    assert ask(replicas.b, another, namespace, temperature=0.7, extra_headers=off)[0] == "miss"
    assert ask(replicas.b, another, namespace, temperature=0.7, extra_headers=opt_in)[:3:2] == ("semantic", original)


def test_no_semantic_hits_for_tool_results(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    call = {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    turn = [
        {"role": "user", "content": "Run it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
        {"role": "assistant", "content": "Ok."},
    ]
    skipped = metric(replicas.b, "cachegate_response_cache_skips_total", tier="semantic", reason="tool_results")
    assert ask(replicas.a, original, namespace, before=turn)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, before=turn)[0] == "miss"
    assert metric(replicas.b, "cachegate_response_cache_skips_total", tier="semantic", reason="tool_results") > skipped


def test_no_cache_header_skips_semantic(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    assert ask(replicas.a, original, namespace)[0] == "miss"
    assert ask(replicas.b, paraphrase, namespace, extra_headers={"cache-control": "no-cache"})[0] == "miss"


def test_anthropic_semantic_hit(replicas: Replicas, namespace: str) -> None:
    original, paraphrase = PARAPHRASE
    # anthropic SDK 2.x has no temperature parameter: the omitted default (1) needs the caller's opt-in.
    headers = {"x-cachegate-cache-namespace": namespace, "x-cachegate-cache-semantic": "on"}

    def create(gw: RunningGateway, prompt: str) -> tuple[str, str]:
        raw = gw.anthropic().messages.with_raw_response.create(
            model="claude-sonnet-4-5",
            max_tokens=100,
            extra_headers=headers,
            messages=[{"role": "user", "content": prompt}],
        )
        return raw.headers["x-cachegate-cache"], raw.parse().content[0].text  # type: ignore[union-attr]

    assert create(replicas.a, original)[0] == "miss"
    assert create(replicas.b, paraphrase) == ("semantic", original)


def test_a_semantic_hit_asked_again_with_no_cache_counts_as_regenerated(replicas: Replicas, namespace: str) -> None:
    """The operator's signal of wrong answers: counted once per served hit, on any replica, never for an
    exact hit or a request the semantic tier did not answer."""
    original, paraphrase = PARAPHRASE
    name = "cachegate_response_cache_semantic_regenerated_total"
    before = metric(replicas.a, name, tenant="acme")
    no_cache = {"extra_headers": {"cache-control": "no-cache"}}
    assert ask(replicas.a, original, namespace)[0] == "miss"
    assert ask(replicas.a, original, namespace)[0] == "exact"
    ask(replicas.a, original, namespace, **no_cache)
    assert metric(replicas.a, name, tenant="acme") == before, "an exact hit re-asked is not a wrong answer"
    assert ask(replicas.b, paraphrase, namespace)[0] == "semantic"
    ask(replicas.a, paraphrase, namespace, **no_cache)
    assert metric(replicas.a, name, tenant="acme") == before + 1
    ask(replicas.a, paraphrase, namespace, **no_cache)
    assert metric(replicas.a, name, tenant="acme") == before + 1, "one served hit counts once"
