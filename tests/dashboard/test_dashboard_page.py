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

from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.gateway_harness import ADMIN_KEY, RunningGateway, gateway_settings, running_gateway

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
        yield gw


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
