"""The real agent CLIs, each run headless against a gateway exactly as README.md's recipes say.

The recipes are read from README.md (fenced blocks tagged ``recipe=<name>``), so the README and the tests
cannot drift: a CLI's shell recipe gives its environment (the `export` lines) and its command lines (the
first run, then the next turn of the same session; `"..."` is the prompt); a config recipe is written where
the README says. The harness adds only the isolation: an own HOME per run, so nothing of the machine's own
configuration is read or written, stdin from /dev/null, a `timeout`, and the gateway's URL for the README's.
Binaries come from tests/agent_clis/npm/node_modules/.bin (`npm ci` there; .ci/run does it).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN = Path(__file__).resolve().parent / "npm" / "node_modules" / ".bin"
README = Path(__file__).resolve().parents[2] / "README.md"
README_URL = "http://127.0.0.1:4000"  # the recipes' gateway (`make serve`)
DEV_KEY = "sk-cachegate-dev"  # the embedded default's tenant key
PROMPT = "..."  # the recipes' prompt
RECIPE = re.compile(r"^```\w+ recipe=([\w-]+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@functools.cache
def recipes() -> dict[str, str]:
    """README.md's recipe blocks by name."""
    return {name: text for name, text in RECIPE.findall(README.read_text())}


def recipe(name: str, url: str) -> str:
    return recipes()[name].replace(README_URL, url)


def shell_recipe(name: str, url: str) -> tuple[dict[str, str], list[list[str]]]:
    """A shell recipe's exported variables and its command lines (as argv, comments dropped)."""
    env: dict[str, str] = {}
    commands = []
    for line in recipe(name, url).splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "export":
            env.update(word.partition("=")[::2] for word in words[1:])
        elif words:
            commands.append(words)
    return env, commands


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
    recipe: str | None = None  # its README recipe, whose second command line is the next turn

    def directive(self, kind: str, command: str) -> str:
        """`[[sim:tool ...]]` or `[[sim:loop ...]]` calling this CLI's shell tool with `command`."""
        return f"[[sim:{kind} {self.shell_tool} {json.dumps({self.command_key: command})}]]"

    def run(
        self, url: str, prompt: str, home: Path, workdir: Path, timeout_s: float, *, next_turn: bool = False
    ) -> Run:
        """Run the CLI on `prompt`; `next_turn`: the recipe's next turn of the session run last in `home`."""
        env, arguments = self.setup(home, url)
        if next_turn:
            assert self.recipe is not None
            arguments = recipe_arguments(shell_recipe(self.recipe, url)[1][1])
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


def from_readme(name: str, files: dict[str, str]) -> Callable[[Path, str], tuple[dict[str, str], list[str]]]:
    """The setup of a CLI's first run from its README recipe; `files`: config recipe -> path under HOME."""

    def setup(home: Path, url: str) -> tuple[dict[str, str], list[str]]:
        for config, path in files.items():
            (home / path).parent.mkdir(parents=True, exist_ok=True)
            (home / path).write_text(recipe(config, url))
        env, commands = shell_recipe(name, url)
        return env, recipe_arguments(commands[0])

    return setup


def recipe_arguments(command: list[str]) -> list[str]:
    """A recipe's command line without its binary and its prompt (the last word, `"..."`)."""
    assert command[-1] == PROMPT, command
    return command[1:-1]


def readme_cli(name: str, shell_tool: str, command_key: str, recipe: str, files: dict[str, str]) -> Cli:
    return Cli(name, shell_tool, command_key, from_readme(recipe, files), recipe)


CLAUDE_CODE = readme_cli("claude", "Bash", "command", "claude-code", {})
CODEX = readme_cli("codex", "exec_command", "cmd", "codex", {"codex-config": ".codex/config.toml"})
GEMINI = readme_cli("gemini", "run_shell_command", "command", "gemini", {"gemini-settings": ".gemini/settings.json"})
