"""The built-in /dashboard, rendered by a real headless Chromium against a real gateway."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway

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
    with running_gateway() as gw:
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
        yield gw


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
    data = httpx.get(
        f"{busy_gateway.url}/admin/dashboard/data", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).json()
    assert data["now"]["requests"] >= 5 and data["now"]["cost_usd"] > 0
    assert any(s["session"] == "inspect-me" and s["requests"] == 4 for s in data["sessions"])


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_page_renders_live_numbers(busy_gateway: RunningGateway) -> None:
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}").stdout
    requests = dom.split('id="requests">', 1)[1].split("<", 1)[0]
    assert requests.replace(",", "").isdigit() and int(requests.replace(",", "")) >= 5, requests
    assert "inspect-me" in dom and "live · state: memory" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_page_without_key_asks_for_it(busy_gateway: RunningGateway) -> None:
    dom = chromium("--dump-dom", f"{busy_gateway.url}/dashboard").stdout
    assert "Admin key required" in dom and "inspect-me" not in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_screenshot(busy_gateway: RunningGateway, tmp_path: Path) -> None:
    shot = tmp_path / "dashboard.png"
    chromium(f"--screenshot={shot}", "--window-size=1280,1100", f"{busy_gateway.url}/dashboard#key={ADMIN_KEY}")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 1100)
    # A rendered page has many colours (cards, text, charts); a blank or error page has a handful.
    colours = image.getcolors(maxcolors=1_000_000) or []
    assert len(colours) > 50
