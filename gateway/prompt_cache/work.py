"""The optimizer's working copy of a request body, copied on write (issue 28).

Every change the optimizer makes lands on it and the caller's body stays as it came (the stage swaps the
copy in only when everything worked). A request changes a few of its history's messages (system text,
the last turn, the marked blocks): the history's list is copied, each of its messages only before it
changes (`own`), so a long history costs a list copy rather than a deep copy on every request. The
tools are the prompt cache's shared ones (tools_part.py): each is copied before a mark is placed on it or
taken off (`own_tools`). The body's other fields stay the caller's until one is changed (`own_field`):
most requests change none (an agent CLI's system prompt is kilobytes a request to copy otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.prompt_cache.shapes import Shape


@dataclass(slots=True, eq=False)
class WorkingCopy:
    """`body`: a copy of the caller's top level. The history (`messages`) is a copy of its list whose
    messages are the caller's objects until `own` copies one; the other fields are the caller's values
    until `own_field` (`own_tools`) copies one."""

    body: dict[str, Any]
    messages: list[Any]
    owned: set[int] = field(default_factory=set)
    tools_owned: bool = False
    shared: set[str] = field(default_factory=set)  # fields still the caller's values (tools: `tools_owned`)

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

    def own_field(self, key: str) -> Any:
        """The body's `key` (not the history nor the tools), deep-copied first if it is still the caller's."""
        if key in self.shared:
            self.shared.discard(key)
            if key in self.body:  # not taken off the copy's top level meanwhile
                self.body[key] = orjson.loads(orjson.dumps(self.body[key]))
        return self.body.get(key)

    def own_fields(self) -> None:
        """Every field still the caller's (but the history and the tools), copied: before a change that
        may reach any of them."""
        for key in list(self.shared):
            self.own_field(key)


def copy_of(body: dict[str, Any], shape: Shape) -> WorkingCopy:
    """The working copy of `body` (a request in `shape`): its top level and its history's list."""
    copied = dict(body)
    shared = set(body) - {"tools"}  # the tools are replaced by the prompt cache's own (tools_part.py)
    history = body.get(shape.history_field)
    messages: list[Any] = []
    if isinstance(history, list):
        messages = copied[shape.history_field] = list(history)
        shared.discard(shape.history_field)
    return WorkingCopy(copied, messages, shared=shared)
