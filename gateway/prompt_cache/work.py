"""The optimizer's working copy of a request body, copied on write (issue 28).

Every change the optimizer makes lands on it and the caller's body stays as it came (the stage swaps the
copy in only when everything worked). A request changes a few of its history's messages (system text,
the last turn, the marked blocks): the history's list is copied, each of its messages only before it
changes (`own`), so a long history costs a list copy rather than a deep copy on every request. The
tools are the prompt cache's shared ones (tools_part.py): each is copied before a mark is placed on it or
taken off (`own_tools`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.pacing import CHUNK, Steps
from gateway.prompt_cache.shapes import Shape


def _deep(value: Any) -> Steps[Any]:
    """A deep copy at JSON speed; a long list CHUNK items at a time (one call on a 4 MB history holds the
    interpreter for 30-50 ms)."""
    if not (isinstance(value, list) and len(value) > CHUNK):
        return orjson.loads(orjson.dumps(value))
    items: list[Any] = []
    for start in range(0, len(value), CHUNK):
        items += orjson.loads(orjson.dumps(value[start : start + CHUNK]))
        yield
    return items


@dataclass(slots=True, eq=False)
class WorkingCopy:
    """`body`: its fields are deep copies, except the history (`messages`): a copy of its list whose
    messages are the caller's objects until `own` copies one."""

    body: dict[str, Any]
    messages: list[Any]
    owned: set[int] = field(default_factory=set)
    tools_owned: bool = False

    def own(self, index: int) -> Any:
        """The history's message at `index`, copied first if it is still the caller's."""
        if index not in self.owned:
            self.messages[index] = orjson.loads(orjson.dumps(self.messages[index]))
            self.owned.add(index)
        return self.messages[index]

    def own_tools(self) -> None:
        """The tools' objects copied, if still shared: a mark is a key of a tool's own (layout.py `Block`),
        so a copy of each tool's top level is all a mark needs."""
        tools = self.body.get("tools")
        if not self.tools_owned and isinstance(tools, list):
            self.body["tools"] = [dict(tool) if isinstance(tool, dict) else tool for tool in tools]
        self.tools_owned = True


def copy_steps(body: dict[str, Any], shape: Shape, replaced: frozenset[str] = frozenset()) -> Steps[WorkingCopy]:
    """The working copy of `body` (a request in `shape`). `replaced`: fields the caller swaps for objects
    of its own before it changes anything (the tools: tools_part.py), left as the caller's meanwhile."""
    copied: dict[str, Any] = {}
    messages: list[Any] = []
    for key, value in body.items():
        if key == shape.history_field and isinstance(value, list):
            messages = copied[key] = list(value)
        elif key in replaced:
            copied[key] = value
        else:
            copied[key] = yield from _deep(value)
    return WorkingCopy(copied, messages)
