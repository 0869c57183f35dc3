"""Every mistake a new operator makes at the command line gets one line on stderr naming what to fix (the file,
the line and the field; the port; the URL), a non-zero exit, and never a traceback.

Each case runs the real `cachegate` command in a subprocess, as a person would.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.deploy.processes import REPO, cachegate, own_environment, spawned
from tests.gateway_harness import ADMIN_KEY, RunningGateway, running_gateway
from tests.ports import spawn_port
from tests.started_together import Command, Started, started_together

TIMEOUT_S = 60.0  # a failure bound: each command exits in about a second
IN_MEMORY_LEDGER = {"CACHEGATE_LEDGER__URL": "sqlite://"}  # a gateway that starts writes no file in the repo


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cachegate(*args), cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S, env=own_environment()
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single line the command printed on stderr, having failed without a traceback."""
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# (file contents, what the line must name after the file's path). None: no file at all.
CONFIG_MISTAKES = {
    "missing": (None, ": no such config file"),
    "bad-yaml": ("port: 4000\ntenants: [\n  - name: a\n", ":3: not valid YAML"),
    "unknown-key": ("port: 4000\nprot: 4001\n", ":2: prot: unknown setting"),
    "unknown-nested-key": (
        "tenants:\n  - name: acme\n    keys: []\n    limits:\n      request_per_minute: 5\n",
        ":5: tenants[0].limits.request_per_minute: unknown setting",
    ),
    "bad-value": ("port: 4000\nredis_timeout_s: soon\n", ":2: redis_timeout_s: Input should be a valid number"),
    "empty": ("", ": the config is empty"),
    "comments-only": ("# nothing here yet\n", ": the config is empty"),
    "not-a-mapping": ("- port: 4000\n", ":1: the config must be a mapping"),
}


@dataclass(frozen=True)
class MistakeRuns:
    configs: dict[str, Path]
    runs: dict[str, Started]


@pytest.fixture(scope="module")
def mistake_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MistakeRuns]:
    """`cachegate serve` on each mistaken config, all started at once (tests/started_together.py)."""
    configs, commands = {}, {}
    for mistake, (text, _) in CONFIG_MISTAKES.items():
        configs[mistake] = config = tmp_path_factory.mktemp(mistake) / "cachegate.yaml"
        if text is not None:
            config.write_text(text)
        argv = cachegate("serve", "--config", str(config), "--port", str(spawn_port()))
        commands[mistake] = Command(argv, cwd=REPO, env=own_environment())
    with started_together(commands) as runs:
        yield MistakeRuns(configs, runs)


@pytest.mark.parametrize("mistake", list(CONFIG_MISTAKES))
def test_a_config_mistake_is_one_line_naming_the_file_line_and_field(mistake: str, mistake_runs: MistakeRuns) -> None:
    _, expected = CONFIG_MISTAKES[mistake]
    config = mistake_runs.configs[mistake]
    line = one_line_error(mistake_runs.runs[mistake].result(TIMEOUT_S))
    assert line.startswith(f"cachegate: {config}{expected}"), line


def test_a_config_without_tenants_says_so_when_it_starts(tmp_path: Path) -> None:
    config = tmp_path / "cachegate.yaml"
    config.write_text("port: 4000\n")
    argv = cachegate("serve", "--config", str(config), "--port", str(spawn_port()))
    with spawned("gateway", argv, tmp_path, env=IN_MEMORY_LEDGER) as gateway:
        gateway.wait_until(lambda: "listening" in gateway.log.read_text())
        first = gateway.log.read_text().splitlines()[0]
    assert first == f"cachegate: {config} has no tenants: every request will be refused (401)"


def test_a_busy_port_is_one_line_naming_the_port() -> None:
    with closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("serve", "--port", str(port))
    line = one_line_error(result)
    assert f"port {port} on 127.0.0.1 is already in use" in line and "PORT=" in line, line
    assert "listening" not in result.stderr


def test_make_serve_takes_a_port() -> None:
    """`make serve PORT=...` reaches `cachegate serve --port` (a busy port shows it: the one-line refusal)."""
    with closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        venv = Path(sys.executable).parents[1]  # this venv, taken as installed (-o): make must not set one up
        make = ["make", "-s", "-o", f"{venv}/.installed", "serve", f"PORT={port}", f"VENV={venv}"]
        result = subprocess.run(
            make, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S, env=own_environment()
        )
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert f"cachegate: port {port} on 127.0.0.1 is already in use" in result.stderr.splitlines()[0], result.stderr


def test_redis_unreachable_at_start_names_the_url_without_its_password(tmp_path: Path) -> None:
    """The gateway still starts (every Redis operation falls back per process), after saying so once."""
    closed_port = spawn_port()
    config = tmp_path / "cachegate.yaml"
    config.write_text((REPO / "gateway" / "default.yaml").read_text())
    url = f"redis://:hunter2secret@127.0.0.1:{closed_port}/0"
    argv = cachegate("serve", "--config", str(config), "--port", str(spawn_port()), "--workers", "1")
    with spawned("gateway", argv, tmp_path, env={"CACHEGATE_REDIS_URL": url, **IN_MEMORY_LEDGER}) as gateway:
        gateway.wait_until(lambda: "listening" in gateway.log.read_text())
        log = gateway.log.read_text()
    assert f"cachegate: Redis at redis://:***@127.0.0.1:{closed_port}/0 is unreachable" in log, log
    assert "hunter2secret" not in log


@pytest.fixture(scope="module")
def gateway() -> Iterator[RunningGateway]:
    with running_gateway() as running:
        yield running


def down_url() -> str:
    return f"http://127.0.0.1:{spawn_port()}"


def test_keys_against_a_down_gateway(gateway: RunningGateway) -> None:
    url = down_url()
    line = one_line_error(run("keys", "--url", url, "--admin-key", ADMIN_KEY, "list"))
    assert line.startswith(f"cachegate keys list: cannot reach the gateway at {url}"), line


def test_keys_with_bad_limits_json(gateway: RunningGateway) -> None:
    argv = ("keys", "--url", gateway.url, "--admin-key", ADMIN_KEY, "create", "--tenant", "acme")
    line = one_line_error(run(*argv, "--limits", "{requests_per_minute: 5}"))
    assert line.startswith("cachegate keys create: --limits is not valid JSON"), line


def test_keys_with_a_wrong_admin_key_says_it_was_refused(gateway: RunningGateway) -> None:
    line = one_line_error(run("keys", "--url", gateway.url, "--admin-key", "sk-not-an-admin-key", "list"))
    assert line.startswith("cachegate keys list: the gateway refused the admin key (401)"), line
    assert "sk-not-an-admin-key" not in line


def test_demo_against_a_down_gateway() -> None:
    url = down_url()
    line = one_line_error(run("demo", "--url", url, "--sessions", "1", "--turns", "1"))
    assert line.startswith(f"cachegate demo: cannot reach the gateway at {url}"), line


def test_demo_with_a_wrong_key_fails_before_any_traffic(gateway: RunningGateway) -> None:
    line = one_line_error(run("demo", "--url", gateway.url, "--key", "sk-wrong", "--sessions", "1", "--turns", "2"))
    assert line.startswith(f"cachegate demo: the gateway at {gateway.url} refused the key (401)"), line
    assert "sk-wrong" not in line
