"""How a resume value answers the interrupts a step is paused on (LangGraph's rules): a dict whose keys
are all interrupt ids answers those interrupts (a map), any other value answers the one pending
interrupt (or goes on past a static breakpoint). Strict mode (configurable `__pregel_strict_resume`,
LangGraph's CONFIG_KEY_STRICT_RESUME) refuses, before anything is written, a map naming an interrupt
that is not pending, an empty map, and a single value while several interrupts are pending."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from agent_runtime.engine.task_status import pending_interrupts
from agent_runtime.errors import UnknownInterruptError

if TYPE_CHECKING:
    from agent_runtime.engine.run_view import RunView

STRICT_RESUME = "__pregel_strict_resume"
_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
AMBIGUOUS = (
    "When there are multiple pending interrupts, you must specify the interrupt id when resuming: "
    "Command(resume={interrupt_id: value, ...})"
)


def is_resume_map(resume: Any) -> bool:
    """A resume by interrupt id: a dict whose keys are all interrupt ids (an empty one too)."""
    return isinstance(resume, dict) and all(isinstance(k, str) and _INTERRUPT_ID.fullmatch(k) for k in resume)


def check_resume(resume: Any, pending: Collection[str], strict: bool) -> None:
    """Raise when `resume` cannot answer the `pending` interrupt ids: in strict mode as above, and in
    any mode for one value while several are pending."""
    pending_ids = tuple(sorted(pending))
    if is_resume_map(resume):
        if not strict:
            return
        if not resume:
            raise UnknownInterruptError(
                "The resume map names no interrupt", reason="empty_map", pending_ids=pending_ids
            )
        unknown = sorted(resume.keys() - set(pending))
        if unknown:
            raise UnknownInterruptError(
                f"Unknown or already-consumed interrupt: {unknown[0]}",
                reason="not_pending",
                interrupt_ids=unknown,
                pending_ids=pending_ids,
            )
    elif len(pending) > 1:
        if strict:
            raise UnknownInterruptError(AMBIGUOUS, reason="ambiguous", pending_ids=pending_ids)
        raise RuntimeError(AMBIGUOUS)


def set_resume(run: RunView, resume: Any) -> None:
    """Hand `Command(resume=...)` to the resumed step's tasks (checked first, see `check_resume`)."""
    pending = {i.id for i in pending_interrupts(run._pending_writes)}
    check_resume(resume, pending, _strict(run))
    if is_resume_map(resume):
        run.resume_source.by_id = dict(resume)
    else:
        run.resume_source.value = resume


def _strict(run: RunView) -> bool:
    """Strict mode applies to the graph resumed (not its subgraphs) at the thread's latest checkpoint
    (a resume of an earlier one re-runs tasks that may ask again what they were answered)."""
    configurable = run.config.get("configurable", {})
    if not configurable.get(STRICT_RESUME) or run.ns or run.checkpointer is None:
        return False
    if "checkpoint_id" not in configurable:
        return True
    newest = run.checkpointer.get_tuple({"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}})
    return newest is not None and newest.checkpoint.id == run.checkpoint_id
