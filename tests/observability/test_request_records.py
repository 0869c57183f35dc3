"""Request records: every request (failures included) has one, readable by its `x-request-id` with the
tenant's key on any replica sharing the Redis, queried by the admin, and feeding the session explorer
(two replicas show the same sessions). Records never hold prompts, answers or keys."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.gateway_harness import (
    ADMIN_KEY,
    TENANT_KEYS,
    RunningGateway,
    gateway_settings,
    replicas_on_one_redis,
    running_gateway,
)

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture(scope="module")
def replicas() -> Iterator[tuple[RunningGateway, RunningGateway]]:
    with replicas_on_one_redis() as pair:
        yield pair


def record(gw: RunningGateway, request_id: str, tenant: str = "acme") -> httpx.Response:
    """The record, once the background writer has stored it (polled for up to two seconds)."""
    deadline = time.monotonic() + 2.0
    while True:
        found = httpx.get(
            f"{gw.url}/v1/requests/{request_id}", headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}"}
        )
        if found.status_code != 404 or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def chat(gw: RunningGateway, content: str, **extra: Any) -> httpx.Response:
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", **extra.pop("headers", {})}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}], **extra}
    return httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body, timeout=30)


def test_a_request_id_opens_its_record_on_any_replica(replicas: tuple[RunningGateway, RunningGateway]) -> None:
    a, b = replicas
    secret = f"a prompt that must never be recorded {uuid.uuid4()}"
    answer = chat(a, f"[[sim:text fine]] {secret}", headers={"x-session-id": "rec-1"})
    found = record(b, answer.headers["x-request-id"])
    assert found.status_code == 200, found.text
    data = found.json()
    assert data["id"] == answer.headers["x-request-id"] and data["status"] == 200 and data["tenant"] == "acme"
    assert data["session"] == "rec-1" and data["route"] == "gpt-4o-mini" and data["api"] == "openai"
    assert data["key"].startswith("cfg-") and data["source"] == "upstream" and data["stream"] is False
    assert data["tokens"]["output"] > 0 and data["cost_usd"] == pytest.approx(
        float(answer.headers["x-cachegate-cost-usd"])
    )
    assert {"auth", "parse", "routing", "upstream", "usage"} <= set(data["stages_ms"]) and data["total_ms"] > 0
    assert secret not in found.text and TENANT_KEYS["acme"] not in found.text and "fine" not in found.text
    assert record(a, answer.headers["x-request-id"], tenant="globex").status_code == 404  # another tenant's
    for hostile in ('x","tenant":"acme', "*", "a" * 5000, answer.headers["x-request-id"].upper()):
        found = httpx.get(f"{a.url}/v1/requests/{hostile}", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"})
        assert found.status_code == 404  # only the gateway's own ids are looked up


def test_failures_and_streams_have_records(replicas: tuple[RunningGateway, RunningGateway]) -> None:
    a, b = replicas
    missing = chat(a, "hi", model="no-such-model")
    assert missing.status_code == 404
    failed = record(b, missing.headers["x-request-id"]).json()
    assert failed["status"] == 404 and failed["error"] == "not_found" and failed["route"] is None
    with httpx.stream(
        "POST",
        f"{a.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "[[sim:text a b c]]"}]},
    ) as streamed:
        streamed.read()
        stream_id = streamed.headers["x-request-id"]
    data = record(b, stream_id).json()
    assert data["stream"] is True and data["ttft_ms"] is not None and data["tokens"]["output"] > 0
    refused = httpx.post(f"{a.url}/v1/chat/completions", headers={"authorization": "Bearer sk-wrong"}, json={})
    assert refused.status_code == 401
    deadline = time.monotonic() + 2.0
    while (
        unknown := httpx.get(f"{b.url}/admin/requests/{refused.headers['x-request-id']}", headers=ADMIN)
    ).status_code == 404:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert unknown.json()["tenant"] == "unknown" and unknown.json()["status"] == 401


def test_admin_queries_and_sessions_are_the_same_on_every_replica(
    replicas: tuple[RunningGateway, RunningGateway],
) -> None:
    a, b = replicas
    session = f"explore-{uuid.uuid4().hex[:8]}"
    ids = [
        chat(gw, f"[[sim:text turn {i}]]", headers={"x-session-id": session}).headers["x-request-id"]
        for i, gw in enumerate((a, b, a))
    ]
    assert record(a, ids[-1]).status_code == 200
    listed = httpx.get(f"{a.url}/admin/requests", params={"session": session}, headers=ADMIN).json()["requests"]
    assert [r["id"] for r in listed] == ids[::-1]  # newest first, from both replicas
    assert httpx.get(f"{b.url}/admin/requests", params={"status": 404, "limit": 5}, headers=ADMIN).json()["requests"]
    views = [httpx.get(f"{gw.url}/admin/dashboard/data", headers=ADMIN).json()["sessions"] for gw in (a, b)]
    mine = [next(s for s in view if s["session"] == session) for view in views]
    assert mine[0] == mine[1] and mine[0]["requests"] == 3
    detail = httpx.get(f"{b.url}/admin/dashboard/sessions/acme/{session}", headers=ADMIN).json()
    assert [event["id"] for event in detail["events"]] == ids  # its requests in order
    assert (
        httpx.get(f"{a.url}/admin/requests", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"}).status_code
        == 401
    )


def test_content_only_for_tenants_that_opt_in() -> None:
    settings = gateway_settings()
    settings["tenants"] = [{**t, "record_content": t["name"] == "globex"} for t in settings["tenants"]]
    with running_gateway(**settings) as gw:
        for tenant in ("acme", "globex"):
            headers = {"authorization": f"Bearer {TENANT_KEYS[tenant]}"}
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text kept]] for audit"}]}
            answer = httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body)
            data = record(gw, answer.headers["x-request-id"], tenant=tenant).json()
            if tenant == "acme":
                assert "content" not in data and "audit" not in str(data)
            else:
                assert "for audit" in data["content"]["request"] and "kept" in data["content"]["response"]
                assert TENANT_KEYS[tenant] not in str(data)
