"""A request naming a `previous_response_id` is as large as the conversation it names: budgets and
tokens per minute hold for that size, so a burst of tiny requests that each resend a large stored
response cannot spend many times the limit (issue 26, finding 2)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai

from tests.core.conftest import CORE_POLICY
from tests.gateway_harness import ADMIN_HEADERS, RunningGateway, running_gateway
from tests.governance.test_rate_limits import limited

PHRASE = "the quick brown fox jumps over a lazy dog while seven wizards quietly hum old songs"
LARGE = " ".join([PHRASE] * 375)  # ~6k tokens: ~32k characters of JSON
LIMIT = 30_000  # tokens: the stored conversation fits about four times
BURST = 20


def stored_large_response(gw: RunningGateway) -> tuple[str, int]:
    """The id of a stored response of ~6k tokens, and its tokens (what each request continuing it uses)."""
    response = gw.openai().responses.create(
        model="gpt-4o-mini", input=f"{LARGE} [[sim:text noted]]", max_output_tokens=16
    )
    assert response.usage is not None and response.usage.input_tokens > 5000
    return response.id, response.usage.total_tokens


def burst(gw: RunningGateway, previous: str) -> list[Any]:
    """BURST parallel tiny requests continuing the stored conversation: each answer, or its refusal."""
    client = gw.openai()

    def send(i: int) -> Any:
        try:
            return client.responses.create(
                model="gpt-4o-mini", previous_response_id=previous, input=f"[[sim:text ok]] {i}", max_output_tokens=16
            )
        except openai.APIStatusError as refused:
            return refused

    with ThreadPoolExecutor(BURST) as pool:
        return list(pool.map(send, range(BURST)))


def refusals(answers: list[Any]) -> list[openai.APIStatusError]:
    return [a for a in answers if isinstance(a, openai.APIStatusError)]


def test_a_budget_holds_the_conversation_a_previous_response_id_names() -> None:
    settings = limited({"budgets": [{"window": "day", "tokens": LIMIT}]}, policy=CORE_POLICY)
    with running_gateway(**settings) as gw:
        previous, each = stored_large_response(gw)
        answers = burst(gw, previous)
        rows = httpx.get(f"{gw.url}/admin/budgets", headers=ADMIN_HEADERS).json()["budgets"]
    spent = next(r for r in rows if r["tenant"] == "acme" and r["scope"] == "tenant")["tokens_spent"]
    # A budget admits a request while it is not spent or held in full, so it ends at most one request over;
    # before, each request held its own few tokens and all twenty ran: ~4x the budget.
    assert spent <= LIMIT + each, (spent, len(refusals(answers)))
    refused = refusals(answers)
    assert 0 < len(refused) < BURST
    assert {r.status_code for r in refused} <= {402, 429}
    assert {r.body["code"] for r in refused} <= {"budget_held", "budget_exceeded"}  # type: ignore[index]


def test_tokens_per_minute_hold_the_conversation_a_previous_response_id_names() -> None:
    settings = limited({"tokens_per_minute": LIMIT}, policy=CORE_POLICY)
    with running_gateway(**settings) as gw:
        previous, each = stored_large_response(gw)
        answers = burst(gw, previous)
    served = [a for a in answers if not isinstance(a, openai.APIStatusError)]
    # The stored response's tokens, then each request's as many: at most the one past the limit more (before:
    # all twenty, ~4x the limit in the minute).
    assert 1 <= len(served) <= LIMIT // each, (len(served), each)
    refused = refusals(answers)
    assert {r.status_code for r in refused} == {429}
    assert all("tokens per minute" in r.message for r in refused)
