"""The Python agent frameworks, unchanged, against a running gateway on the embedded default's routes.

One gateway for the package: the embedded default's models and aliases (so each framework's default model
name routes as it would on `cachegate serve`), the default policy (guard ladder nudge -> stop -> block),
the simulator mounted in-process. Each framework test runs a task that uses a real Python tool, then a
loop the guard stops (`Observed` counts what reached the gateway: log lines and cost).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from gateway.config import load_settings
from tests.gateway_harness import TENANT_KEYS, RunningGateway, gateway_settings, running_gateway
from tests.guard_stage.conftest import metric

KEY = TENANT_KEYS["acme"]
REQUEST_LOGGER = "cachegate.request"
COST = 'cachegate_cost_usd_total{model="%s",tenant="acme"}'
DECISIONS = {
    action: f'cachegate_guard_decisions_total{{action="{action}",detector="identical_calls",reason="loop"}}'
    for action in ("nudge", "stop", "block")
}
STOP = "Stopped by the loop guard (reason: loop, detector: identical_calls)"  # agent_runtime.guard.stop_message


@pytest.fixture(scope="package")
def gw() -> Iterator[RunningGateway]:
    default = load_settings()
    routes = [route.model_dump() for route in default.models]
    with running_gateway(**gateway_settings(models=routes, model_aliases=default.model_aliases)) as gateway:
        yield gateway


@pytest.fixture
def openai_env(gw: RunningGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a user sets for the OpenAI-based frameworks (README "Use it with ...")."""
    monkeypatch.setenv("OPENAI_BASE_URL", f"{gw.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the Agents SDK would send traces to OpenAI


@pytest.fixture
def anthropic_env(gw: RunningGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", gw.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def session_id() -> str:
    """One session id per agent run: what the README recommends for frameworks that send none."""
    return f"run-{uuid.uuid4().hex[:12]}"


@dataclass
class Notes:
    """The tool of every test: a real Python function whose calls the test reads back."""

    written: list[str] = field(default_factory=list)

    def record_note(self, text: str) -> str:
        """Record a note and return a receipt."""
        self.written.append(text)
        return f"noted {text}"


def task(word: str) -> str:
    """A task that needs one tool call (the simulator answers text after the tool's result)."""
    return f'Record the note, then report. [[sim:tool record_note {{"text": "{word}"}}]]'


def loop(word: str) -> str:
    """A stuck agent: the same tool call after every tool result."""
    return f'Record the note until it sticks. [[sim:loop record_note {{"text": "{word}"}}]]'


class Observed:
    """What reached the gateway during a block: its request log lines, the cost counted for a model and
    the guard's decisions."""

    def __init__(self, gw: RunningGateway, caplog: pytest.LogCaptureFixture, model: str) -> None:
        self.gw, self.caplog, self.model = gw, caplog, model
        caplog.set_level(logging.INFO, logger=REQUEST_LOGGER)
        caplog.clear()
        self.before = {name: metric(gw, name) for name in (COST % model, *DECISIONS.values())}

    def _delta(self, name: str) -> float:
        return metric(self.gw, name) - self.before[name]

    @property
    def lines(self) -> list[str]:
        return [r.getMessage() for r in self.caplog.records if r.name == REQUEST_LOGGER]

    @property
    def cost(self) -> float:
        return self._delta(COST % self.model)

    def decisions(self) -> dict[str, int]:
        """The guard's loop decisions by action (nudge, stop, block) since the block started."""
        return {action: int(self._delta(name)) for action, name in DECISIONS.items()}

    def sources(self) -> list[str]:
        """Who answered each logged request, in order: `upstream`, `guard` (a stop) ..."""
        return [_field(line, "source") for line in self.lines]

    def sessions(self) -> set[str]:
        return {_field(line, "session") for line in self.lines}


CREDENTIAL_WORDS = ("authenticat", "api key", "api_key", "permission", "login", "forbidden")


def assert_block_shown(error: BaseException, seen: Observed) -> None:
    """A blocked session's next run: exactly one request reached the gateway (the guard's block, no retry)
    and the framework raised it with the guard's reason and how to go on, in no credential wording."""
    assert len(seen.lines) == 1 and " error=agent_loop_stopped reason=LOOP " in seen.lines[0], seen.lines
    assert seen.decisions()["block"] == 1
    shown = f"{type(error).__name__}: {error}"
    assert "Stopped by the loop guard (reason: loop" in shown and "/admin/guard/session/unblock?" in shown, shown
    assert not any(word in shown.lower() for word in CREDENTIAL_WORDS), shown


def _field(line: str, name: str) -> str:
    for part in line.split():
        if part.startswith(f"{name}="):
            return part[len(name) + 1 :]
    return ""
