"""deploy/prometheus-alerts.yml: valid rules (`promtool check rules`), each alert firing once for its event and
not without it (`promtool test rules` on tests/deploy/prometheus-alerts.test.yml), over series the gateway
really exports (checked against a live gateway's /metrics, as tests/deploy/test_dashboards.py does for the
dashboards). An alert over a misspelt metric never fires, and nobody notices: this is what notices.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.deploy.processes import REPO
from tests.deploy.test_dashboards import Exported, Selector, selectors_of
from tests.gateway_harness import ADMIN_HEADERS, running_gateway

RULES = REPO / "deploy" / "prometheus-alerts.yml"
RULE_TESTS = REPO / "tests" / "deploy" / "prometheus-alerts.test.yml"
# The events of issue 30's alerts, each with its rule.
ALERTS = {
    "CachegateGuardStopped",
    "CachegateGuardBlocking",
    "CachegateBudgetSoftLimit",
    "CachegateBudgetExhausted",
    "CachegateCacheHitRatioFell",
    "CachegateDeploymentCooldown",
}


def promtool(*args: str) -> str:
    binary = shutil.which("promtool")
    assert binary, "the alert rule tests need promtool (.ci/run installs Debian's prometheus package)"
    result = subprocess.run([binary, *args], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def test_promtool_accepts_the_rules() -> None:
    assert f"SUCCESS: {len(ALERTS)} rules found" in promtool("check", "rules", str(RULES))


def test_each_alert_fires_for_its_event_only() -> None:
    tested = {
        case["alertname"]
        for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
        for case in test["alert_rule_test"]
    }
    assert {rule["alert"] for rule in rules()} == ALERTS == tested
    assert "SUCCESS" in promtool("test", "rules", str(RULE_TESTS))


def test_the_compose_prometheus_loads_the_rules(tmp_path: Path) -> None:
    """deploy/prometheus.yml as the compose Prometheus reads it: its container paths are the mounts of
    docker-compose.yml, here pointed at the repo's files."""
    prometheus = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]["prometheus"]
    text = (REPO / "deploy" / "prometheus.yml").read_text()
    for volume in prometheus["volumes"]:
        source, target = volume.split(":")[:2]
        if source.startswith("./"):
            text = text.replace(target, str(REPO / source))
    config = tmp_path / "prometheus.yml"
    config.write_text(text)
    assert f"SUCCESS: {len(ALERTS)} rules found" in promtool("check", "config", str(config))


@pytest.fixture(scope="module")
def exported() -> Exported:
    with running_gateway() as gateway:
        response = httpx.get(f"{gateway.url}/metrics", headers=ADMIN_HEADERS)
    response.raise_for_status()
    return Exported.parse(response.text)


def test_every_metric_an_alert_reads_is_exported(exported: Exported) -> None:
    selectors: list[Selector] = [
        selector for rule in rules() for selector in selectors_of("alerts", rule["alert"], rule["expr"])
    ]
    assert {s.name for s in selectors} >= {
        "cachegate_guard_decisions_total",
        "cachegate_budget_refusals_total",
        "cachegate_prompt_cache_tokens_total",
        "cachegate_deployment_cooldowns_total",
    }
    missing = sorted({f"{s.panel}: {s.name}" for s in selectors if s.name not in exported.families})
    assert not missing, f"alerts over series the gateway does not export: {missing}"
