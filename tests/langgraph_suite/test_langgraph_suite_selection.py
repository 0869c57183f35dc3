"""LangGraph 1.2.24's own tests on agent_runtime: the ones listed in expected_pass.txt must keep passing.

They run in a subprocess (run_suite.py ci) with the `langgraph` shim first on sys.path, so the real
langgraph our other tests use is never shadowed in this process. See README.md in this folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_expected_langgraph_tests_pass_on_agent_runtime() -> None:
    lines = (HERE / "expected_pass.txt").read_text().splitlines()
    expected = [line for line in lines if line and not line.startswith("#")]
    assert expected, "expected_pass.txt is empty: run `python tests/langgraph_suite/run_suite.py measure`"
    proc = subprocess.run(
        [sys.executable, str(HERE / "run_suite.py"), "ci"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
    assert proc.returncode == 0, f"LangGraph tests that passed on agent_runtime now fail:\n{tail}"
    assert f"{len(expected)} passed" in proc.stdout, tail
