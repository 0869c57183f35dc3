"""Commands a module's tests each check the output of, all started at once by a module fixture and each read
by its own test: their start-ups (mostly imports) overlap on the machine's cores instead of adding up."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Command:
    argv: list[str]
    cwd: Path | None = None
    env: Mapping[str, str] | None = None  # None: this process's environment


@dataclass
class Started:
    process: subprocess.Popen[str]

    def result(self, timeout_s: float) -> subprocess.CompletedProcess[str]:
        """Its exit status and output, once it has ended (as `subprocess.run` gives them)."""
        stdout, stderr = self.process.communicate(timeout=timeout_s)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, stdout, stderr)


@contextmanager
def started_together(commands: Mapping[str, Command]) -> Iterator[dict[str, Started]]:
    """Every command started now, its output captured; any still running on exit is killed."""
    started: dict[str, Started] = {}
    try:
        for name, command in commands.items():
            process = subprocess.Popen(
                command.argv,
                cwd=command.cwd,
                env=None if command.env is None else dict(command.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            started[name] = Started(process)
        yield started
    finally:
        for run in started.values():  # those a test left unread (it failed first, or was deselected)
            if run.process.poll() is None:
                run.process.kill()
            run.process.communicate()
