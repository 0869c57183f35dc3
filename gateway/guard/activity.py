"""Sessions seen recently on this replica (the cachegate_guard_sessions_active gauge)."""

from __future__ import annotations

import time
from collections import OrderedDict


class Activity:
    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._seen: OrderedDict[str, float] = OrderedDict()

    def touch(self, session: str) -> None:
        self._seen[session] = time.monotonic()
        self._seen.move_to_end(session)

    def active(self) -> int:
        """Sessions seen within the window (older ones are forgotten here)."""
        horizon = time.monotonic() - self.window_s
        while self._seen and next(iter(self._seen.values())) < horizon:
            self._seen.popitem(last=False)
        return len(self._seen)
