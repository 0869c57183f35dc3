"""The shared data sets several benchmarks read: `data/` in the project's shared/ folder beside the
repository (or where CACHEGATE_SHARED_DIR points), which is not part of the repository."""

from __future__ import annotations

from pathlib import Path

from gateway.traces import shared_dir


def require(path: Path, option: str | None = None) -> Path:
    """`path`, or exit with one line naming it and what to pass (rather than a FileNotFoundError traceback)."""
    if path.exists():
        return path
    instead = f"pass {option} PATH, or " if option else ""
    raise SystemExit(
        f"{path} not found: {instead}set CACHEGATE_SHARED_DIR to the folder that holds the shared data/ "
        f"(now {shared_dir()})"
    )
