"""The built-in /dashboard, rendered by a real headless Chromium against a real gateway."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from PIL import Image

from gateway.config import hash_key
from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.routing.test_pools import KEYS, MODELS, POOL, deployment_of
from tests.routing.test_pools import chat as pool_chat
from tests.routing.test_pools import settings as pool_settings

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--virtual-time-budget=5000",
]


@pytest.fixture(scope="module")
def busy_gateway() -> Iterator[RunningGateway]:
    settings = gateway_settings()
    budget = {"budgets": [{"window": "month", "usd": 0.001}]}  # a small budget: the meter shows some use
    settings["tenants"] = [{**t, "limits": budget} if t["name"] == "acme" else t for t in settings["tenants"]]
    settings["tenants"] = [{**t, "limits": {"requests_per_minute": 1}} if t["name"] == "globex" else t
                           for t in settings["tenants"]]  # fmt: skip
    settings["tenants"].append(
        {"name": "initech", "keys": [hash_key(SPENT_KEY)], "limits": {"budgets": [{"window": "month", "usd": 1e-9}]}}
    )
    with running_gateway(**settings) as gw:
        client = gw.openai()
        for turn in range(4):
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"[[sim:text answer {turn}]]"}],
                extra_headers={"x-session-id": "inspect-me"},
            )
        gw.anthropic().messages.create(
            model="claude-sonnet-4-5", max_tokens=20, messages=[{"role": "user", "content": "hello"}]
        )
        loop_until_blocked(gw)
        drive_errors_of_every_class(gw)
        assert ask(gw) == "miss" and ask(gw) == "exact"
        wait_for_ledger(gw, EXPECTED_REQUESTS)
        yield gw


SPENT_KEY = "sk-initech-test"  # a tenant whose budget its first request spends
# inspect-me 4, claude 1, the looping agent (turns to its block), 6 errors, 2 cache questions: at least
EXPECTED_REQUESTS = 4 + 1 + 3 + 6 + 2


def post_chat(gw: RunningGateway, key: str, model: str = "gpt-4o-mini") -> int:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {key}"}
    return httpx.post(f"{gw.url}/v1/chat/completions", headers=headers, json=body).status_code


def drive_errors_of_every_class(gw: RunningGateway) -> None:
    """Besides the guard's block: a client error, a spent budget, a rate limit, a provider failure."""
    assert post_chat(gw, TENANT_KEYS["acme"], "no-such-model") == 404  # client
    assert post_chat(gw, SPENT_KEY) == 200 and post_chat(gw, SPENT_KEY) == 402  # budget
    assert post_chat(gw, TENANT_KEYS["globex"]) == 200 and post_chat(gw, TENANT_KEYS["globex"]) == 429  # rate limit
    gw.queue_faults("500", model="gpt-4o-mini")
    assert post_chat(gw, TENANT_KEYS["acme"], "slow") == 502  # provider (no retries on this route)


def ask(gw: RunningGateway) -> str:
    """A temperature-0 question (the response cache stores its answer): the cache tier that answered."""
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", temperature=0, messages=[{"role": "user", "content": "What is the capital of France?"}]
    )
    return raw.headers["x-cachegate-cache"]


def wait_for_ledger(gw: RunningGateway, requests: int) -> None:
    """The ledger writes in batches off the request path: until it holds the traffic above."""
    deadline = time.monotonic() + 30
    while admin_data(gw)["window"]["totals"]["ok"] + admin_data(gw)["window"]["totals"]["errors"] < requests:
        assert time.monotonic() < deadline, admin_data(gw)["window"]["totals"]
        time.sleep(0.2)


def loop_until_blocked(gw: RunningGateway) -> None:
    """An agent resending the same tool call and result until the guard refuses the session: on the way
    the guard nudges, then stops it."""
    for turns in range(1, 16):
        try:
            gw.openai().chat.completions.create(
                model="gpt-4o-mini",
                tools=RUN_TESTS,
                extra_headers={"x-session-id": "looping-agent"},
                messages=openai_tool_turns(turns, "1 failed: test_login"),
            )
        except openai.APIStatusError:
            return
    raise AssertionError("the guard never refused the looping session")


def admin_data(gw: RunningGateway) -> dict[str, Any]:
    return httpx.get(f"{gw.url}/admin/dashboard/data", headers={"authorization": f"Bearer {ADMIN_KEY}"}).json()


def element(dom: str, element_id: str) -> str:
    """The opening tag of the element with this id (where its `hidden` attribute is)."""
    return dom.split(f'id="{element_id}"', 1)[1].split(">", 1)[0]


def shown(dom: str, element_id: str) -> bool:
    return "hidden" not in element(dom, element_id)


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM, "chromium is installed by .ci/run (Debian package 'chromium')"
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )


def test_data_needs_admin_key(busy_gateway: RunningGateway) -> None:
    assert httpx.get(f"{busy_gateway.url}/admin/dashboard/data").status_code == 401
    data = admin_data(busy_gateway)
    assert data["now"]["requests"] >= 5 and data["now"]["cost_usd"] > 0
    assert any(s["session"] == "inspect-me" and s["requests"] == 4 for s in data["sessions"])
    budget = next(b for b in data["budgets"] if b["tenant"] == "acme")
    assert budget["scope"] == "tenant" and budget["usd_limit"] == 0.001 and 0 < budget["usd_spent"] < 0.001


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_page_renders_live_numbers(busy_gateway: RunningGateway) -> None:
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    requests = dom.split('id="requests">', 1)[1].split("<", 1)[0]
    assert requests.replace(",", "").isdigit() and int(requests.replace(",", "")) >= 5, requests
    assert "inspect-me" in dom and "live · state: memory" in dom
    panels = ("charts", "guard", "sessions", "budgets")
    assert not any(shown(dom, f"empty-{panel}") for panel in panels)
    assert "<td>acme</td><td>all keys</td><td>month</td>" in dom and '<div class="meter"><span' in dom
    assert dom.count("<polyline") >= 5 and dom.count('<tr class="request">') >= 5  # charts, recent requests


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_page_without_key_asks_for_it(busy_gateway: RunningGateway) -> None:
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard").stdout
    assert "Admin key required" in dom and "inspect-me" not in dom
    assert shown(dom, "login") and not shown(dom, "main") and not shown(dom, "login-error")
    assert "sk-cachegate-admin" in dom  # where to find the key: the embedded default's dev admin key


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_wrong_key_says_so(busy_gateway: RunningGateway) -> None:
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key=sk-cachegate-dev").stdout  # a tenant key
    assert shown(dom, "login") and not shown(dom, "main") and "inspect-me" not in dom
    assert shown(dom, "login-error")
    assert "That key is not the admin key of this gateway (it answered 401 Unauthorized)" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_guard_decisions_by_action_and_detector(busy_gateway: RunningGateway) -> None:
    decisions = admin_data(busy_gateway)["now"]["guard"]
    actions = [d["action"] for d in decisions]
    assert {"nudge", "stop", "block"} <= set(actions), decisions
    assert actions == sorted(actions, key=["warn", "nudge", "stop", "block"].index)  # ladder order
    assert all(d["detector"] and d["reason"] and d["count"] >= 1 for d in decisions), decisions
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    for d in decisions:
        row = f'<tr class="guard-{d["action"]}"><td>{d["action"]}</td><td>{d["detector"]}</td><td>{d["reason"]}</td>'
        assert f"{row}<td>{d['count']}</td></tr>" in dom, (d, dom)
    per_action = " · ".join(
        f"{a} {sum(d['count'] for d in decisions if d['action'] == a)}" for a in dict.fromkeys(actions)
    )
    assert f'id="guard-actions">{per_action}<' in dom
    total = sum(d["count"] for d in decisions)
    assert f'id="guard">{total}<' in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_fresh_gateway_says_what_to_do() -> None:
    with running_gateway() as fresh:
        dom = chromium("--dump-dom", f"{fresh.url}/dashboard#key={ADMIN_KEY}").stdout
    assert shown(dom, "main") and 'id="requests">0<' in dom and shown(dom, "empty-budgets")
    for panel in ("charts", "guard", "sessions"):
        hint = dom.split(f'id="empty-{panel}"', 1)[1].split("</p>", 1)[0]
        assert shown(dom, f"empty-{panel}"), panel
        assert f"Point a client at <code>{fresh.url}</code> with a tenant key" in hint, hint
        assert f"run <code>cachegate demo --url {fresh.url}</code>" in hint, hint


def colours(shot: Path, size: tuple[int, int]) -> int:
    image = Image.open(shot).convert("RGB")
    assert image.size == size
    return len(image.getcolors(maxcolors=1_000_000) or [])


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
@pytest.mark.parametrize("size", [(1280, 1100), (760, 1400)], ids=["wide", "narrow"])
def test_screenshots_empty_and_busy(busy_gateway: RunningGateway, tmp_path: Path, size: tuple[int, int]) -> None:
    window = f"--window-size={size[0]},{size[1]}"
    busy, empty = tmp_path / "busy.png", tmp_path / "empty.png"
    chromium(f"--screenshot={busy}", window, f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}")
    with running_gateway() as fresh:
        chromium(f"--screenshot={empty}", window, f"{fresh.url}/dashboard#key={ADMIN_KEY}")
    # A rendered page has many colours (cards, text, charts); a blank or error page has a handful.
    assert colours(busy, size) > 50 and colours(empty, size) > 50


def test_series_over_a_chosen_range(busy_gateway: RunningGateway) -> None:
    headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    data = httpx.get(f"{busy_gateway.url}/admin/dashboard/data", params={"range_s": 300}, headers=headers).json()
    series = data["series"]
    assert len(series) == 30 and series[-1]["t"] <= time.time() + 1
    assert sum(p["ok"] + p["errors"] for p in series) == len(data["requests"]) or len(data["requests"]) == 25
    assert sum(p["errors"] for p in series) >= 1 and any(p["p50_ms"] for p in series)  # the blocked request
    assert sum(p["cost_usd"] for p in series) == pytest.approx(sum(r["cost_usd"] for r in data["requests"]))
    refused = httpx.get(f"{busy_gateway.url}/admin/dashboard/data", params={"range_s": 7}, headers=headers)
    assert refused.status_code == 400


# -- one window: cards, charts, errors by class, spend by key, blocked sessions, the request log's search -----


def text_of(dom: str, element_id: str) -> str:
    return dom.split(f'id="{element_id}">', 1)[1].split("<", 1)[0]


def test_cards_are_the_sums_of_the_window_charts(busy_gateway: RunningGateway) -> None:
    window = admin_data(busy_gateway)["window"]
    points, totals = window["points"], window["totals"]
    assert len(points) == 30 and totals["ok"] + totals["errors"] >= EXPECTED_REQUESTS
    for name in ("ok", "errors", "errors_guard", "exact_hits", "semantic_hits", "guard"):
        assert totals[name] == sum(p[name] for p in points), name
    for name in ("cost_usd", "saved_usd", "saved_prompt_usd", "saved_response_usd"):
        assert totals[name] == pytest.approx(sum(p[name] for p in points)), name
    assert totals["exact_hits"] == 1 and totals["saved_response_usd"] > 0  # the second question
    assert any(p["p50_ms"] for p in points) and all(p["p95_ms"] is None for p in points if not p["ok"])
    assert 0 < totals["saved_share"] == pytest.approx(totals["saved_usd"] / (totals["cost_usd"] + totals["saved_usd"]))
    # The page shows the same numbers, read by a real browser.
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    shown_requests = int(text_of(dom, "requests").replace(",", ""))
    assert shown_requests >= totals["ok"] + totals["errors"]  # at least: the page's own fetches come later
    assert text_of(dom, "response-tiers") == "exact 1 · semantic 0"
    assert "the ledger's records of this window" in dom


def test_errors_split_by_class(busy_gateway: RunningGateway) -> None:
    totals = admin_data(busy_gateway)["window"]["totals"]
    classes = {name: totals[f"errors_{name}"] for name in ("guard", "budget", "rate_limit", "client", "provider")}
    assert all(count >= 1 for count in classes.values()), classes
    assert totals["errors_gateway"] == 0 and sum(classes.values()) == totals["errors"]
    metrics = busy_gateway.metrics()
    for name in classes:
        assert f'error_class="{name}"' in metrics and "cachegate_request_errors_total{" in metrics
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    assert f"guard {classes['guard']} · budget {classes['budget']} · rate limit {classes['rate_limit']}" in dom


def test_spend_by_key(busy_gateway: RunningGateway) -> None:
    window = admin_data(busy_gateway)["window"]
    by_key = {row["key"]: row["cost_usd"] for row in window["by_key"]}
    assert len([key for key in by_key if key and key.startswith("cfg-")]) >= 3, by_key  # acme, globex, initech
    assert sum(by_key.values()) == pytest.approx(window["totals"]["cost_usd"])
    assert {row["model"] for row in window["by_model"]} >= {"gpt-4o-mini", "claude-sonnet-4-5"}
    metrics = busy_gateway.metrics()
    for key, usd in by_key.items():
        if key and usd:
            assert f'cachegate_key_cost_usd_total{{key="{key}"' in metrics, key
    assert "sk-acme-test" not in metrics  # labels are ids, never the secret
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    by_key_table = dom.split('id="by-key">', 1)[1].split("</tbody>", 1)[0]
    assert all(f"<td>{key}</td>" in by_key_table for key in by_key if key)


def test_guard_blocked_sessions_are_marked(busy_gateway: RunningGateway) -> None:
    listed = {s["session"]: s["blocked"] for s in admin_data(busy_gateway)["sessions"]}
    assert listed["looping-agent"] is True and listed["inspect-me"] is False
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    assert '<tr class="session blocked"><td>acme</td><td>looping-agent</td>' in dom
    assert '<tr class="session"><td>acme</td><td>inspect-me</td>' in dom


def test_request_log_search_and_filters(busy_gateway: RunningGateway) -> None:
    def query(**params: Any) -> list[dict[str, Any]]:
        response = httpx.get(
            f"{busy_gateway.url}/admin/requests", params=params, headers={"authorization": f"Bearer {ADMIN_KEY}"}
        )
        assert response.status_code == 200, response.text
        return list(response.json()["requests"])

    assert [r["session"] for r in query(q="INSPECT")] == ["inspect-me"] * 4  # any field, any case
    assert {r["status"] for r in query(error_class="budget")} == {402}
    assert {r["status"] for r in query(error_class="rate_limit", tenant="globex")} == {429}
    guard = query(error_class="guard")
    assert guard and all(r["session"] == "looping-agent" for r in guard)
    assert query(q="no-such-model", error_class="client")[0]["status"] == 404
    assert query(q="nothing-matches-this") == []
    bad = httpx.get(
        f"{busy_gateway.url}/admin/requests",
        params={"error_class": "nonsense"},
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
    )
    assert bad.status_code == 400  # a validation error, in the admin API's shape
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    assert 'id="search-text"' in dom and '<option value="initech">initech</option>' in dom


# -- deployment pools: per deployment attempts, cooldowns, headroom and its own prompt cache ----------------


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_pools_of_several_deployments(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in KEYS.items():
        monkeypatch.setenv(f"POOL_KEY_{name.upper()}", key)
    with running_gateway(**pool_settings("embedded-sim")) as gw:
        session = "pooled-session"
        _, first = pool_chat(gw, session, ["[[sim:text one]]"])
        home = deployment_of(gw, first)["id"]
        other = next(name for name in ("east", "west") if name != home)
        gw.queue_faults("500", model=MODELS[home])
        pool_chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]"])  # fails over to the other
        pool_chat(gw, session, ["[[sim:text one]]", "[[sim:text two]]", "[[sim:text three]]"])  # its cache
        rows = {row["id"]: row for row in admin_data(gw)["pools"]}
        dom = chromium("--dump-dom", f"{gw.url}/dashboard#key={ADMIN_KEY}").stdout
    assert set(rows) == {"east", "west"} and {row["pool"] for row in rows.values()} == {POOL}  # no pool of one
    resting, serving = rows[home], rows[other]
    assert (resting["ok"], resting["errors"], resting["cooldowns"]["server_error"]) == (1, 1, 1), resting
    assert resting["cooling_until"] > time.time() and resting["circuit_open"] is False
    assert (serving["ok"], serving["errors"], sum(serving["cooldowns"].values())) == (2, 0, 0), serving
    assert serving["cache_read_tokens"] > 0 and 0 < serving["hit_ratio"] < 1 and resting["hit_ratio"] == 0
    assert serving["headroom"] == 1.0 and serving["cooling_until"] is None
    assert shown(dom, "pools")
    table = dom.split('id="pool-rows">', 1)[1].split("</tbody>", 1)[0]
    cells = "<td>{}</td>" * 5  # pool, deployment, region (its name here), ok, errors
    assert '<tr class="deployment resting">' + cells.format(POOL, home, home, 1, 1) + "<td>server_error 1</td>" in table
    assert '<tr class="deployment">' + cells.format(POOL, other, other, 2, 0) + "<td></td>" in table
    assert "cooling until " in table and "ready" in table


def test_no_pools_section_without_a_pool_of_several(busy_gateway: RunningGateway) -> None:
    assert admin_data(busy_gateway)["pools"] == []
