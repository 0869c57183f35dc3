"""One log line and one cachegate_requests sample for every request, failures included."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.gateway_harness import TENANT_KEYS, RunningGateway
from tests.guard_stage.conftest import metric

ACME = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
GLOBEX = {"authorization": f"Bearer {TENANT_KEYS['globex']}"}
HI = [{"role": "user", "content": "[[sim:text hi]]"}]
CHAT = "/v1/chat/completions"


def sample(api: str, tenant: str, model: str, status: str, provider: str = "none") -> str:
    return (
        f'cachegate_requests_total{{api="{api}",model="{model}",provider="{provider}",status="{status}",'
        f'tenant="{tenant}"}}'
    )


def post(gw: RunningGateway, body: dict[str, Any], headers: dict[str, str], path: str = CHAT) -> httpx.Response:
    return httpx.post(f"{gw.url}{path}", json=body, headers=headers, timeout=30)


def block_session(gw: RunningGateway, session: str) -> dict[str, str]:
    headers = {**GLOBEX, "x-session-id": session}
    for i in range(7):  # globex: 6 LLM calls, then a stop; the next request is blocked
        question = [{"role": "user", "content": f"q{i}"}]
        assert post(gw, {"model": "gpt-4o-mini", "messages": question}, headers).is_success
    return headers


Case = Callable[[RunningGateway], httpx.Response]
CASES: list[tuple[str, Case, int, str, str]] = [
    ("ok", lambda gw: post(gw, {"model": "gpt-4o-mini", "messages": HI}, ACME), 200, "ok", "acme"),
    ("stream", lambda gw: post(gw, {"model": "gpt-4o-mini", "messages": HI, "stream": True}, ACME), 200, "ok", "acme"),
    ("bad", lambda gw: post(gw, {"model": "gpt-4o-mini", "messages": "nope"}, ACME), 400, "400", "acme"),
    ("no key", lambda gw: post(gw, {"model": "gpt-4o-mini", "messages": HI}, {}), 401, "401", "unknown"),
    ("no model", lambda gw: post(gw, {"model": "gpt-nope", "messages": HI}, ACME), 404, "404", "acme"),
]


@pytest.mark.parametrize(("name", "send", "http", "status", "tenant"), CASES, ids=[c[0] for c in CASES])
def test_one_line_and_one_sample(
    gw: RunningGateway, caplog: pytest.LogCaptureFixture, name: str, send: Case, http: int, status: str, tenant: str
) -> None:
    model = "gpt-4o-mini" if http == 200 else "unknown"  # a 400 is found before routing
    provider = "openai" if http == 200 else "none"
    key = sample("openai", tenant, model, status, provider)
    before = metric(gw, key)
    caplog.set_level(logging.INFO, logger="cachegate.request")
    caplog.clear()
    response = send(gw)
    assert response.status_code == http
    lines = [r.getMessage() for r in caplog.records if r.name == "cachegate.request"]
    assert len(lines) == 1, lines
    assert f"status={http} " in lines[0] and f"tenant={tenant} " in lines[0]
    assert f"request={response.headers['x-request-id']} " in lines[0]
    assert metric(gw, key) - before == 1


def test_guard_block_is_logged_with_its_reason(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    headers = block_session(gw, "telemetry-block")
    key = sample("openai", "globex", "gpt-4o-mini", "400")
    before = metric(gw, key)
    caplog.set_level(logging.INFO, logger="cachegate.request")
    caplog.clear()
    response = post(gw, {"model": "gpt-4o-mini", "messages": HI}, headers)
    assert response.status_code == 400
    (line,) = [r.getMessage() for r in caplog.records if r.name == "cachegate.request"]
    assert "status=400 error=agent_loop_stopped reason=MAX_STEPS tenant=globex session=telemetry-block" in line
    assert metric(gw, key) - before == 1


def test_upstream_429_is_logged(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    gw.reset_sim()
    gw.queue_faults("429", "429", "429", model="gpt-4o-mini")  # retries=2: all three attempts fail
    key = sample("openai", "acme", "gpt-4o-mini", "429")
    before = metric(gw, key)
    caplog.set_level(logging.INFO, logger="cachegate.request")
    caplog.clear()
    response = post(gw, {"model": "gpt-4o-mini", "messages": HI}, ACME)
    assert response.status_code == 429
    (line,) = [r.getMessage() for r in caplog.records if r.name == "cachegate.request"]
    assert "status=429 error=rate_limit" in line
    assert metric(gw, key) - before == 1


def test_the_line_holds_no_key_and_no_content(gw: RunningGateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cachegate.request")
    caplog.clear()
    post(gw, {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text secret-words]]"}]}, ACME)
    post(gw, {"model": "gpt-4o-mini", "messages": HI}, {"authorization": "Bearer sk-wrong-key-123"})
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "cachegate.request")
    assert text.count("request=") == 2
    assert "secret-words" not in text and TENANT_KEYS["acme"] not in text and "sk-wrong" not in text
