"""`cachegate demo` drives every scenario through the embedded default and reports savings and stops."""

from __future__ import annotations

from gateway.demo.runner import plan, run_demo


def test_plan_covers_every_scenario() -> None:
    scenarios = {request.scenario for request in plan(sessions=2, turns=3)}
    assert scenarios == {"agent sessions", "looping agents", "questions"}


def test_demo_on_embedded_default() -> None:
    report = run_demo(None, "sk-cachegate-dev", sessions=2, turns=6, concurrency=4)
    assert "looping agents: stop" in report or "looping agents: block" in report, report
    assert "response cache exact" in report, report
    saved = float(report.split("saved by prompt_cache", 1)[1].split("$", 1)[1].split()[0].replace(",", ""))
    assert saved > 0, report
