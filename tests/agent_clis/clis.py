"""The real agent CLIs, each run headless against a gateway the way a user would point it there.

Recipes from docs/design/clients.md: an own HOME (and CODEX_HOME) per run so nothing of the machine's
own configuration is read or written, every phone-home switch off, stdin from /dev/null, a `timeout`.
Binaries come from tests/agent_clis/npm/node_modules/.bin (`npm ci` there; .ci/run does it).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN = Path(__file__).resolve().parent / "npm" / "node_modules" / ".bin"
DEV_KEY = "sk-cachegate-dev"  # the embedded default's tenant key

CODEX_CONFIG = """\
model_provider = "cachegate"
check_for_update_on_startup = false

[analytics]
enabled = false
[feedback]
enabled = false
[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
[features]
plugins = false
remote_plugin = false
remote_models = false

[model_providers.cachegate]
name = "cachegate"
base_url = "{url}/v1"
env_key = "CACHEGATE_API_KEY"
wire_api = "responses"
"""

GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    ended: float  # time.time() when the process had exited


@dataclass(frozen=True)
class Cli:
    name: str  # the binary in node_modules/.bin
    shell_tool: str  # its tool that runs a shell command
    command_key: str  # that tool's argument holding the command
    # (home, gateway url) -> the CLI's own environment variables and arguments before the prompt
    setup: Callable[[Path, str], tuple[dict[str, str], list[str]]]

    def directive(self, kind: str, command: str) -> str:
        """`[[sim:tool ...]]` or `[[sim:loop ...]]` calling this CLI's shell tool with `command`."""
        return f"[[sim:{kind} {self.shell_tool} {json.dumps({self.command_key: command})}]]"

    def run(self, url: str, prompt: str, home: Path, workdir: Path, timeout_s: float) -> Run:
        env, arguments = self.setup(home, url)
        base = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb"}
        argv = ["timeout", str(timeout_s), str(binary(self.name)), *arguments, prompt]
        done = subprocess.run(
            argv,
            env={**base, **env},
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s + 10,
        )
        return Run(done.returncode, done.stdout, done.stderr, time.time())


def binary(name: str) -> Path:
    """The CLI's binary; missing, the test is skipped, except in CI (env CI set), where it fails."""
    path = BIN / name
    if not path.exists():
        message = f"{path} is missing: run `npm ci` in {BIN.parent.parent}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def claude_code(home: Path, url: str) -> tuple[dict[str, str], list[str]]:
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": DEV_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry, no HEAD /api/hello
        "IS_SANDBOX": "1",  # --dangerously-skip-permissions refuses root otherwise
    }
    return env, ["-p", "--dangerously-skip-permissions", "--output-format", "json"]


def codex(home: Path, url: str) -> tuple[dict[str, str], list[str]]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=url))
    env = {"CODEX_HOME": str(codex_home), "CACHEGATE_API_KEY": DEV_KEY}
    return env, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]


def gemini(home: Path, url: str) -> tuple[dict[str, str], list[str]]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(GEMINI_SETTINGS))
    env = {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": DEV_KEY, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    return env, ["--approval-mode", "yolo", "--output-format", "json", "-p"]


CLAUDE_CODE = Cli("claude", "Bash", "command", claude_code)
CODEX = Cli("codex", "exec_command", "cmd", codex)
GEMINI = Cli("gemini", "run_shell_command", "command", gemini)
