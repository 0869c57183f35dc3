"""The README's command facts that a newcomer checks first."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version


def test_version_is_printed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cachegate {version('cachegate')}"
