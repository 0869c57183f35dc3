"""`cachegate demo` drives every scenario through the embedded default and reports savings and stops."""

from __future__ import annotations

from pathlib import Path

import pytest

import gateway
from gateway import traces
from gateway.demo.runner import embedded_gateway, plan, run_demo


def test_plan_covers_every_scenario() -> None:
    scenarios = {request.scenario for request in plan(sessions=2, turns=3)}
    assert scenarios == {"agent sessions", "looping agents", "questions"}


@pytest.fixture
def no_shared_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As in a fresh clone or an installed wheel: no shared/ beside the code, and any read of it fails."""
    monkeypatch.setenv("CACHEGATE_SHARED_DIR", str(tmp_path / "absent"))

    def refuse() -> Path:
        raise AssertionError("the demo read the shared traces")

    monkeypatch.setattr(traces, "default_traces", refuse)


def test_the_demo_data_is_package_data() -> None:
    source = traces.demo_traces()
    assert Path(str(source)).resolve().is_relative_to(Path(gateway.__file__).resolve().parent)
    sessions = list(traces.read_sessions(source))
    assert 1 <= len(sessions) <= 10 and all(s["resolved"] and s["tools"] and s["messages"] for s in sessions)
    assert Path(str(source)).stat().st_size < 1_000_000
    pyproject = (Path(gateway.__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert "demo/sessions.jsonl" in pyproject  # shipped in the wheel


def requests_answered(report: str) -> int:
    return int(report.split("requests answered", 1)[1].split()[0].replace(",", ""))


@pytest.mark.usefixtures("no_shared_data")
def test_demo_on_embedded_default_twice() -> None:
    """A fresh gateway: the demo waits for the embedder, so its paraphrases get semantic hits. A second run
    on the same gateway reports only itself and starts its loops afresh (new session ids, not blocked)."""
    with embedded_gateway() as url:
        first = run_demo(url, "sk-cachegate-dev", sessions=2, turns=6, concurrency=4)
        second = run_demo(url, "sk-cachegate-dev", sessions=2, turns=6, concurrency=4)
    assert "looping agents: stop" in first and "response cache exact" in first, first
    assert "response cache semantic" in first, first  # not all skipped as embedder_loading
    saved = float(first.split("saved by prompt_cache", 1)[1].split("$", 1)[1].split()[0].replace(",", ""))
    assert saved > 0, first
    assert "looping agents: stop" in second, second  # its loops were not blocked from the start
    assert requests_answered(second) == requests_answered(first) < len(plan(sessions=2, turns=6)), second
