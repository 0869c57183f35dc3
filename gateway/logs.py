"""Logging a failure without its message: exception text can carry request content or keys (a
provider's echo, a value in a ValueError), and logs must hold neither. The type and where it was
raised are enough to find the bug."""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path

FRAMES_SHOWN = 8


def where(exc: BaseException) -> str:
    """The innermost frames of the traceback, innermost first: 'file.py:line function <- ...'."""
    frames = traceback.extract_tb(exc.__traceback__)[-FRAMES_SHOWN:]
    return " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))


def log_failure(logger: logging.Logger, message: str, *args: object) -> None:
    """Inside an `except` block: log `message` with the exception's type and frames, not its text."""
    exc = sys.exc_info()[1]
    if exc is None:
        logger.error(message, *args)
        return
    logger.error(message + " (%s at %s)", *args, type(exc).__name__, where(exc))
