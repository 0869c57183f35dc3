"""Claude Code, Codex CLI and Gemini CLI, run as README.md's recipes say (tests/agent_clis/clis.py reads
them from there), against the embedded default.

Each runs a task that uses its shell tool (two model turns), then an agent loop the guard stops: the CLI
must end normally, within seconds of the stop. One request log line per request, and the cost lands in the
metrics. The next turn of a stopped session (the recipe's second command line) sends one request, answered
by the guard (a block; Gemini CLI, which sends no session id, is stopped again by its history), and the CLI
shows the guard's reason in no credential wording.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx
import pytest

from tests.agent_clis.clis import CLAUDE_CODE, CODEX, GEMINI, Cli, Run
from tests.gateway_harness import RunningGateway

ADMIN = {"authorization": "Bearer sk-cachegate-admin"}  # the embedded default's admin key
REQUEST_LOG = "cachegate.request"
TASK_TIMEOUT_S = 40
LOOP_TIMEOUT_S = 15


def metric(gw: RunningGateway, prefix: str, label: str = "") -> float:
    """Sum of the /metrics samples whose line starts with `prefix` and holds `label`."""
    text = httpx.get(f"{gw.url}/metrics", headers=ADMIN).raise_for_status().text
    lines = [line for line in text.splitlines() if line.startswith(prefix) and label in line]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def run_cli(cli: Cli, gw: RunningGateway, prompt: str, tmp_path: Path, timeout_s: float) -> tuple[Run, Path]:
    home, workdir = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    workdir.mkdir()
    return cli.run(gw.url, prompt, home, workdir, timeout_s), workdir


def request_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == REQUEST_LOG]


def report(run: Run) -> str:
    return f"exit {run.returncode}\nstdout: {run.stdout[-2000:]}\nstderr: {run.stderr[-2000:]}"


@pytest.mark.parametrize("cli", [CLAUDE_CODE, CODEX, GEMINI], ids=lambda cli: cli.name)
def test_task_with_a_tool(cli: Cli, gw: RunningGateway, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    requests, cost = metric(gw, "cachegate_requests_total"), metric(gw, "cachegate_cost_usd_total", 'tenant="dev"')
    caplog.set_level(logging.INFO, logger=REQUEST_LOG)
    caplog.clear()
    prompt = "Write done to out.txt. " + cli.directive("tool", "echo done > out.txt")
    run, workdir = run_cli(cli, gw, prompt, tmp_path, TASK_TIMEOUT_S)
    assert run.returncode == 0, report(run)
    assert (workdir / "out.txt").read_text().strip() == "done"  # the task's effect
    lines = [record.getMessage() for record in request_lines(caplog)]
    served = metric(gw, "cachegate_requests_total") - requests
    assert len(lines) == served >= 2, lines  # the tool call, then the answer to its result
    assert len({line.split()[0] for line in lines}) == len(lines)  # request=<id>: one line each
    assert all("status=200 " in line and "tenant=dev " in line for line in lines), lines
    assert metric(gw, "cachegate_cost_usd_total", 'tenant="dev"') > cost


def loop_stopped(cli: Cli, gw: RunningGateway, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stops = metric(gw, 'cachegate_guard_decisions_total{action="stop"')
    caplog.set_level(logging.INFO, logger=REQUEST_LOG)
    caplog.clear()
    prompt = "Keep at it. " + cli.directive("loop", "echo again >> out.txt")
    started = time.time()
    run, workdir = run_cli(cli, gw, prompt, tmp_path, LOOP_TIMEOUT_S)
    records = request_lines(caplog)
    stopped = [r for r in records if " source=guard " in r.getMessage()]
    assert stopped, report(run)  # the guard answered the stuck agent itself
    assert metric(gw, 'cachegate_guard_decisions_total{action="stop"') > stops
    assert run.returncode == 0, report(run)
    assert run.ended - stopped[0].created < 5, f"{run.ended - stopped[0].created:.1f}s after the stop"
    assert stopped[0] is records[-1]  # nothing after the stop: the CLI took it as the final answer
    assert (workdir / "out.txt").read_text().count("again") >= 2, f"ran {run.ended - started:.1f}s"


CREDENTIAL_WORDS = ("authenticat", "api key", "api_key", "login", "forbidden", "permission denied")


@pytest.mark.parametrize("cli", [CLAUDE_CODE, CODEX, GEMINI], ids=lambda cli: cli.name)
def test_loop_is_stopped_then_next_turn(
    cli: Cli, gw: RunningGateway, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loop_stopped(cli, gw, tmp_path, caplog)
    caplog.clear()
    run = cli.run(gw.url, "Go on.", tmp_path / "home", tmp_path / "work", LOOP_TIMEOUT_S, next_turn=True)
    lines = [record.getMessage() for record in request_lines(caplog)]
    answered = [line for line in lines if " source=guard " in line or " error=agent_loop_stopped " in line]
    assert len(answered) == 1, lines
    model = answered[0].split(" model=")[1].split()[0]
    # One request of the conversation, no retry (Gemini CLI's model router asks another model first).
    assert [line for line in lines if f" model={model} " in line] == answered, lines
    shown = run.stdout + run.stderr
    assert "Stopped by the loop guard (reason: loop" in shown, report(run)
    assert not any(word in shown.lower() for word in CREDENTIAL_WORDS), report(run)
    if " error=agent_loop_stopped " in answered[0]:  # a block says how to lift it
        assert "/admin/guard/session/unblock?tenant=dev&session=" in shown, report(run)
