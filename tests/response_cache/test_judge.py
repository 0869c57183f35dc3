"""The semantic tier's optional judge model: candidates between its threshold (0.90) and the tier's (0.98)
are served only when the judge says one answer fits both requests; its call is charged to the request.

The simulator is the judge here: a `[[sim:text ...]]` directive in the asked prompt (the judge request's
last) makes its answer, so `yes` and `different` stand for the two verdicts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway_harness import RunningGateway, running_gateway
from tests.response_cache.conftest import metric, warm_embedders

# Cosines (all-MiniLM-L6-v2) of 0.95 and 0.97: below the tier's threshold, above the judge's.
SAME = ("How do I reverse a list in Python? [[sim:text yes]]", "How can a Python list be reversed? [[sim:text yes]]")
JUDGED_DIFFERENT = (
    "How do I sort a dictionary by value in Python? [[sim:text different]]",
    "How can a Python dictionary be sorted by value? [[sim:text different]]",
)
NUMBER_CHANGED = (
    "How do I reverse a list of 10 items in Python? [[sim:text yes]]",
    "How can a Python list of 12 items be reversed? [[sim:text yes]]",
)


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    judge = {"model": "gpt-4o-mini", "threshold": 0.9}
    with running_gateway(policy={"response_cache": {"embed_timeout_s": 10.0, "judge": judge}}) as gateway:
        warm_embedders(gateway)
        yield gateway


def ask(gw: RunningGateway, prompt: str, namespace: str) -> Any:
    return gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        temperature=0,
        messages=[{"role": "user", "content": prompt}],
        extra_headers={"x-cachegate-cache-namespace": namespace},
    )


def sim_requests(gw: RunningGateway) -> int:
    totals: dict[str, int] = gw.sim_stats()["totals"]
    return totals.get("requests", 0)


@pytest.fixture
def namespace() -> str:
    return f"judge-{uuid.uuid4().hex[:10]}"


def test_the_judge_serves_a_paraphrase_below_the_threshold_and_charges_its_call(
    gw: RunningGateway, namespace: str
) -> None:
    original, paraphrase = SAME
    assert ask(gw, original, namespace).headers["x-cachegate-cache"] == "miss"
    before = sim_requests(gw)
    raw = ask(gw, paraphrase, namespace)
    assert raw.headers["x-cachegate-cache"] == "semantic"
    assert raw.headers["x-cachegate-cache-judge"] == "yes"
    assert 0.9 <= float(raw.headers["x-cachegate-similarity"]) < 0.98
    assert sim_requests(gw) - before == 1, "the judge's call, and no answer upstream"
    assert float(raw.headers["x-cachegate-cost-usd"]) > 0, "the judge's call is this request's cost"
    assert metric(gw, "cachegate_response_cache_judge_cost_usd_total", tenant="acme") > 0


def test_a_candidate_the_judge_refuses_goes_upstream(gw: RunningGateway, namespace: str) -> None:
    original, near = JUDGED_DIFFERENT
    ask(gw, original, namespace)
    before = sim_requests(gw)
    raw = ask(gw, near, namespace)
    assert (raw.headers["x-cachegate-cache"], raw.headers["x-cachegate-cache-judge"]) == ("miss", "no")
    assert sim_requests(gw) - before == 2, "the judge's call, then the answer"
    assert metric(gw, "cachegate_response_cache_judge_verdicts_total", verdict="no") >= 1


def test_the_verifier_vetoes_before_the_judge_is_asked(gw: RunningGateway, namespace: str) -> None:
    original, changed = NUMBER_CHANGED
    ask(gw, original, namespace)
    before = sim_requests(gw)
    raw = ask(gw, changed, namespace)
    assert raw.headers["x-cachegate-cache"] == "miss"
    assert "x-cachegate-cache-judge" not in raw.headers
    assert sim_requests(gw) - before == 1, "no judge call for a pair whose numbers differ"
