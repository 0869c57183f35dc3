"""The resume values given to a run (`Command(resume=...)`), which its step's tasks take as they ask."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_runtime.channels import MISSING


@dataclass(slots=True)
class ResumeSource:
    """Resume values given to a run (`Command(resume=...)`), shared by the tasks of the step: one
    value for the one pending interrupt, or answers by interrupt id (engine/resume_values.py)."""

    value: Any = MISSING
    by_id: dict[str, Any] = field(default_factory=dict)
