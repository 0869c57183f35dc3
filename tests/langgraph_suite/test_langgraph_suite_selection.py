"""LangGraph 1.2.24's own tests on agent_runtime: the ones listed in expected_pass.txt must keep passing.

They run in a subprocess (run_suite.py ci) with the `langgraph` shim first on sys.path, so the real
langgraph our other tests use is never shadowed in this process. See README.md in this folder. The
subprocess starts at collection (conftest.py), so it runs alongside the rest of the suite."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SUITE = pytest.StashKey["SuiteRun"]()
NICENESS = 10  # below the tests it runs alongside: their timings stay theirs


@dataclass
class SuiteRun:
    process: subprocess.Popen[str]

    @classmethod
    def start(cls) -> SuiteRun:
        command = ["nice", "-n", str(NICENESS), sys.executable, str(HERE / "run_suite.py"), "ci"]
        return cls(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))

    def output(self, timeout_s: float) -> tuple[int, str]:
        """Its exit status and output, once it has ended."""
        try:
            output, _ = self.process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        return self.process.returncode, output


def test_expected_langgraph_tests_pass_on_agent_runtime(request: pytest.FixtureRequest) -> None:
    lines = (HERE / "expected_pass.txt").read_text().splitlines()
    expected = [line for line in lines if line and not line.startswith("#")]
    assert expected, "expected_pass.txt is empty: run `python tests/langgraph_suite/run_suite.py measure`"
    run = request.config.stash.get(SUITE, None) or SuiteRun.start()  # not started at collection: now
    returncode, output = run.output(timeout_s=600)
    tail = "\n".join(output.strip().splitlines()[-40:])
    assert returncode == 0, f"LangGraph tests that passed on agent_runtime now fail:\n{tail}"
    assert f"{len(expected)} passed" in output, tail
