"""The benchmarks that read the shared data sets say in one line what to pass when they are absent (a fresh
clone has no ../shared/data), instead of a FileNotFoundError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("module", "option"),
    [
        ("bench.guard_quality", "--traces"),
        ("bench.prompt_cache_replay", "--traces"),
        ("bench.semantic_quality", "--data"),
    ],
)
def test_missing_shared_data_is_one_line(module: str, option: str, tmp_path: Path) -> None:
    env = {**os.environ, "CACHEGATE_SHARED_DIR": str(tmp_path / "absent")}
    done = subprocess.run(
        [sys.executable, "-m", module], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(str(tmp_path / "absent")) and f"pass {option} PATH" in line, line
    assert "CACHEGATE_SHARED_DIR" in line
