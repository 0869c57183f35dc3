"""Steps: the normalised unit every loop detector looks at.

A *step* is one action of the agent: one tool call (an assistant turn with three tool calls gives three
steps), one plain-text reply, one empty reply or one malformed call. Each step keeps only hashes:

- ``tool`` and ``args_hash``: the tool name and a hash of its arguments as canonical JSON (sorted keys,
  no whitespace), so ``{"b": 1, "a": 2}`` and ``{"a":2,"b":1}`` are the same call. Arguments may be given
  as a JSON string or a mapping; a string that does not parse is hashed as text. Canonicalisation is
  bounded (``MAX_DEPTH`` levels of nesting): a deeper value is opaque, hashed as it is (a string as
  sent, an object serialised without recursion), so hostile nesting never exhausts the stack.
- ``result_hash`` and ``is_error``: what the environment answered. For a tool call that is the tool
  result; for a text step it is the next user message (the harness's or the human's reply), so a model
  repeating itself to *different* inputs is not a loop. ``None`` while no answer exists yet.
- ``text_hash``: the assistant's text (for tool steps: the text of the turn that made the call; it is
  deliberately not part of the call's identity, since thoughts vary while actions repeat).

Call ids (``tool_call_id`` / ``tool_use_id``) only pair a result with its call; they never enter a hash.

The same two parsers (``parser.py``, over the per-message ``parts.py``) serve the gateway (steps from
each request's history) and the runtime:

- ``steps_from_openai_messages(messages)``: Chat Completions format (assistant ``tool_calls`` and ``tool``
  messages; legacy ``function_call`` / ``function`` messages; ``custom`` free-form tool calls).
- ``steps_from_anthropic_messages(messages)``: Messages API format (``tool_use`` / ``tool_result`` blocks,
  with ``is_error``; server tools' ``*_tool_result`` blocks).

Kinds: a function call whose arguments are not valid JSON, or a call with no tool name, is
``MALFORMED`` (the provider or harness could not run it); an assistant turn with no tool call and no
text is ``EMPTY``.

Error heuristic for results that carry no explicit flag (see ``looks_like_error``): an exit-code marker
on the first or last line decides (``<returncode>1</returncode>``, ``Exit code: 1``,
``[Command finished with exit code 1]``: non-zero is an error); otherwise the result is an error when it
starts with ``error`` (``Error: ...``, ``Error executing tool ...``), ``fatal:``, ``exception:``,
``Traceback (most recent call last)`` or ``An error occurred``. An explicit flag wins: Anthropic
``is_error``, and the non-standard ``is_error`` (bool) or ``status: "error"`` (LangChain) keys on an
OpenAI ``tool`` message.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "Step",
    "StepKind",
    "canonical_json",
    "content_text",
    "digest",
    "looks_like_error",
    "make_empty_step",
    "make_malformed_step",
    "make_text_step",
    "make_tool_step",
    "result_fields",
]

_SUMMARY_CHARS = 80
_EDGE_CHARS = 512
# Levels of JSON nesting canonicalised; deeper values are opaque. Real arguments nest a few levels; the
# gateway refuses bodies deeper than 64, but a JSON *string* (tool arguments) can nest any depth.
MAX_DEPTH = 64


class StepKind(StrEnum):
    TOOL_CALL = "tool_call"
    TEXT = "text"
    EMPTY = "empty"
    MALFORMED = "malformed"


@dataclass(frozen=True, slots=True)
class Step:
    """One agent step, reduced to hashes (see the module docstring for each field's meaning)."""

    kind: StepKind
    tool: str | None = None
    args_hash: str | None = None
    result_hash: str | None = None
    is_error: bool = False
    text_hash: str | None = None
    # Human-readable, for detection details and nudge messages; never compared.
    summary: str = field(default="", compare=False)
    # The call waits (a sleep, a wait tool, a watch): repeating it, or a cycle holding it, is polling.
    waits: bool = field(default=False, compare=False)
    # The call changes files or the environment (an edit, a write, an install): re-running an earlier
    # check after it is verification, not a revisit (``detect_no_progress``).
    changes: bool = field(default=False, compare=False)
    # When the call's result came back (seconds, any clock), when the consumer knows it; long polling
    # (``detect_long_polling``) is measured with it.
    at: float | None = field(default=None, compare=False)

    @property
    def action(self) -> tuple[str | None, ...]:
        """What the agent did: the call for a tool step, the text for a text step."""
        if self.kind is StepKind.TEXT:
            return (self.kind, self.text_hash)
        return (self.kind, self.tool, self.args_hash)

    @property
    def key(self) -> tuple[str | None, ...]:
        """What the agent did and what came back: equal keys mean the step taught nothing new."""
        return (*self.action, self.result_hash)


def digest(text: str) -> str:
    """A short stable hash (64-bit BLAKE2b, hex) of a text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels (level by level: no recursion)."""
    if not isinstance(value, Mapping | list | tuple):
        return False
    level = [value]
    for _ in range(limit):
        below = [
            child
            for node in level
            for child in (node.values() if isinstance(node, Mapping) else node)
            if isinstance(child, Mapping | list | tuple)
        ]
        if not below:
            return False
        level = below
    return True


def _opaque_json(value: Any) -> str:
    """A too-deep value serialised without recursion (same shape as ``canonical_json``, keys as text)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Token):
            out.append(item.text)
        elif isinstance(item, Mapping):
            pairs = sorted((str(k), v) for k, v in item.items())
            stack.append(_Token("}"))
            for index in range(len(pairs) - 1, -1, -1):
                stack.append(pairs[index][1])
                stack.append(_Token(("," if index else "") + _dumps(pairs[index][0]) + ":"))
            stack.append(_Token("{"))
        elif isinstance(item, list | tuple):
            stack.append(_Token("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Token(","))
            stack.append(_Token("["))
        else:
            out.append(_dumps(item))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal arguments always serialise the same; a value
    nesting deeper than ``MAX_DEPTH`` is serialised without recursion (hashed as it is)."""
    if isinstance(value, Mapping | list | tuple) and _deeper_than(value, MAX_DEPTH):
        return _opaque_json(value)
    return _dumps(value)


def content_text(content: Any, _depth: int = 0) -> str:
    """The text of a message or result content: a string, or a list of parts/blocks.

    Text parts are joined by newlines; any other part (an image, a document) enters as canonical JSON,
    so two results that differ only in an image still differ. Tool results nested in tool results are
    read ``MAX_DEPTH`` levels down; deeper ones enter as canonical JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, Iterable):
        return str(content)
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "tool_result" and _depth < MAX_DEPTH:
            parts.append(content_text(part.get("content"), _depth + 1))
        else:
            parts.append(canonical_json(part))
    return "\n".join(parts)


_EXIT_CODE = re.compile(
    r"<returncode>\s*(-?\d+)\s*</returncode>"
    r"|^\W*(?:process |command )?(?:exited|finished|failed)?\s*with exit (?:code|status)\s*(-?\d+)\W*$"
    r"|^\W*(?:exit code|exit status|return code|returncode)\s*[:=]?\s*(-?\d+)\W*$",
    re.IGNORECASE,
)
_ERROR_PREFIX = re.compile(
    r"(?:error\b|(?:fatal|exception)\s*:|traceback \(most recent call last\)|an error occurred)",
    re.IGNORECASE,
)


def looks_like_error(text: str) -> bool:
    """Whether a tool result with no explicit error flag reports a failure (heuristic in module doc)."""
    # Only the first and last lines matter: look at bounded ends, outputs can be megabytes.
    head = text[:_EDGE_CHARS].lstrip()
    if not head:
        return False
    first = head.split("\n", 1)[0]
    last = text[-_EDGE_CHARS:].rstrip().rsplit("\n", 1)[-1]
    for line in (first, last):
        match = _EXIT_CODE.search(line)
        if match:
            return int(next(group for group in match.groups() if group is not None)) != 0
    return _ERROR_PREFIX.match(head) is not None


def _args_text(args: str | Mapping[str, Any] | None) -> tuple[str, bool]:
    """Canonical text of call arguments, and whether they were valid JSON. A JSON string nesting deeper
    than ``MAX_DEPTH`` is opaque: hashed as sent, and counted as valid (the provider accepted it)."""
    if args is None:
        return "{}", True
    if isinstance(args, str):
        if not args.strip():
            return "{}", True
        try:
            value = json.loads(args)
        except RecursionError:  # the decoder gives up on deep nesting before the stack does
            return args, True
        except ValueError:
            return args, False
        if args.count("[") + args.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
            return args, True
        return _dumps(value), True
    return canonical_json(args), True


def _summary(text: str) -> str:
    text = " ".join(text[: 2 * _SUMMARY_CHARS].split())
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"


# What changes on every run of the same command while its outcome does not: the agent harness's process
# ids and output chunk ids (Gemini CLI's "Process Group PGID: 4865", Codex's "Chunk ID: 80a625"), timings
# ("Wall time: 0.0012 seconds", "Ran 3 tests in 0.004s") and UUIDs. Masked before a result is hashed, so
# a repeated command with the same outcome reads as a repeat.
_VOLATILE_VALUE = re.compile(
    r"\b((?:chunk id|pgid|pid|process id|wall time|elapsed(?: time)?|duration|time taken|took|request id|trace id)"
    r"\s*[:=]\s*)[^\s\\\",;]+",
    re.IGNORECASE,
)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|us|µs|ns|s|secs?|seconds?)\b")
# A part of every match of each mask above, under the same flags, found at a fraction of the cost: most
# outputs hold none of them and skip that mask's scan.
_LABEL_END = re.compile(r"(?:id|time|elapsed|duration|taken|took)\s*[:=]")  # a label's last word, lowercase
_LABEL_LETTER = re.compile(r"[dekn]\s*[:=]", re.IGNORECASE)  # its last letter, in any text
_UUID_HINT = re.compile(r"-[0-9a-f]{4}-[0-9a-f]{4}-", re.IGNORECASE)  # a UUID's middle
_DURATION_HINT = re.compile(r"\d\s?(?:[mnuµ]?s|secs?|seconds?|milliseconds?)\b")  # a digit, then a unit


# Two hints read backwards (a text holds a match iff its reverse holds the reversed pattern's): each
# reversed pattern starts with a literal character, which the engine skips to instead of trying every
# position (a third of the scan). ``(?<!\wc)`` after a word's first letter ``c`` is the ``\b`` before it.
_LABEL_END_REVERSED = tuple(
    re.compile(separator + r"\s*(?:di|emit|despale|noitarud|nekat|koot)") for separator in (":", "=")
)
_DURATION_HINT_REVERSED = (
    re.compile(r"s(?<!\ws)(?:[mnuµ]|ces|dnoces|dnocesillim)?\s?\d"),
    re.compile(r"c(?<!\wc)es\s?\d"),
    re.compile(r"d(?<!\wd)noces(?:illim)?\s?\d"),
)


def _has_label(text: str) -> bool:
    # ASCII text lowercased matches as IGNORECASE would, and the words scan faster than the letters
    # (other text may fold to them under IGNORECASE: the Kelvin sign of `toK`). ``_LABEL_END``, reversed.
    if text.isascii():
        backwards = text.lower()[::-1]
        return any(pattern.search(backwards) is not None for pattern in _LABEL_END_REVERSED)
    return _LABEL_LETTER.search(text) is not None


def _has_duration(text: str) -> bool:
    """``_DURATION_HINT.search``, reversed."""
    backwards = text[::-1]
    return any(pattern.search(backwards) is not None for pattern in _DURATION_HINT_REVERSED)


_MASKS: tuple[tuple[Callable[[str], object], re.Pattern[str], str], ...] = (
    (_has_label, _VOLATILE_VALUE, r"\1#"),
    (_UUID_HINT.search, _UUID, "#uuid"),
    (_has_duration, _DURATION, "#s"),
)


def stable_result_text(text: str) -> str:
    """The result with its run-to-run noise masked (see ``_VOLATILE_VALUE``), for hashing only. Labelled
    values are found inside JSON-escaped text too (a tool's output wrapped as {"output": "...\\n..."})."""
    for hint, mask, replacement in _MASKS:
        if hint(text):
            text = mask.sub(replacement, text)
    return text


# In a call's arguments: whitespace (raw, or escaped inside JSON strings) and nonces, values that make each
# call unique without changing what it does (UUIDs, hex runs of 16+, digit runs of 9+ such as Unix
# timestamps). Masked before the arguments are hashed, so `make  test # 3f9a...` repeated with a fresh
# nonce is still the same call; calls that differ in what they do (another file, a short commit id) differ.
_SPACE = re.compile(r"(?:\s|\\[ntr])+")
_NONCE = re.compile(r"\b(?:[0-9a-f]{16,}|\d{9,})\b", re.IGNORECASE)
# ASCII bytes with each hex digit as "x" and anything else as ".": every nonce holds a run of 9 hex digits,
# which ``bytes.translate`` and a substring search find at a fraction of the regex's scan.
_HEX_RUNS = bytes(ord("x") if chr(byte) in "0123456789abcdefABCDEF" else ord(".") for byte in range(256))


def _may_hold_nonce(text: str) -> bool:
    return not text.isascii() or b"xxxxxxxxx" in text.encode("ascii").translate(_HEX_RUNS)


def _collapse_space(text: str) -> str:
    """``_SPACE.sub(" ", text)`` by str methods (C loops, no regex scan): an escape (backslash, then n, t
    or r) can only start at its backslash, so replacing them one kind after the other finds the same
    ones; ``split`` splits on the characters ``\\s`` matches (``str.isspace``)."""
    if "\\" in text:
        text = text.replace("\\n", " ").replace("\\t", " ").replace("\\r", " ")
    words = text.split()
    if not words:
        return " " if text else ""
    return f"{' ' if text[0].isspace() else ''}{' '.join(words)}{' ' if text[-1].isspace() else ''}"


def stable_args_text(text: str) -> str:
    """Canonical argument text with whitespace runs collapsed and nonces masked, for hashing only."""
    if _UUID_HINT.search(text):
        text = _UUID.sub("#", text)
    if _may_hold_nonce(text):
        text = _NONCE.sub("#", text)
    return _collapse_space(text).replace('" ', '"').replace(' "', '"')


def result_fields(result: Any, is_error: bool | None) -> tuple[str | None, bool]:
    """A result's ``result_hash`` and ``is_error`` (``result``: None while the call is unanswered)."""
    if result is None:
        return None, bool(is_error)
    text = content_text(result)
    return digest(stable_result_text(text)), looks_like_error(text) if is_error is None else is_error


# A call that waits before it looks again: a tool named for it (`sleep`, `wait_for_job`), a shell
# `sleep 30` or `watch -n 5`, a `--watch` flag, or an argument naming a delay (`"wait_seconds": 30`).
_WAIT_TOOL = re.compile(r"(?:^|[_.-])(?:sleep|wait)(?:$|[_.-])", re.IGNORECASE)
_WAIT_ARGS = re.compile(
    r"\bsleep\s+\d|\bwatch\s+-n|--watch\b|\"(?:wait|sleep|delay|poll_interval|interval)[a-z_]*\":\s*\d",
    re.IGNORECASE,
)


_WAIT_WORDS = ("sleep", "watch", "wait", "delay", "interval")  # one is in every match of _WAIT_ARGS


def waits(tool: str, args_text: str) -> bool:
    if _WAIT_TOOL.search(tool):
        return True
    # ASCII text: the words, lowercased, decide at a fraction of the scan's cost (other text may fold to
    # them under IGNORECASE: the `ſ` of `ſleep`).
    if args_text.isascii():
        lower = args_text.lower()
        if not any(word in lower for word in _WAIT_WORDS):
            return False
    return bool(_WAIT_ARGS.search(args_text))


# A call that changes something: a tool named for writing (Claude Code's Edit / Write, Codex's
# apply_patch, Gemini CLI's replace / write_file, an MCP create_issue), unless its command only reads
# (str_replace_editor's `view`); or a shell command that writes: in-place edits, a redirect into a file,
# tee, patch, file moves, git commands that change the tree, package installs.
_CHANGE_TOOL = re.compile(
    r"edit|write|creat|replac|insert|patch|apply|updat|delet|remov|renam|move|save|commit|append|modif|mkdir",
    re.IGNORECASE,
)
_READ_COMMAND = re.compile(r'"(?:command|action|mode)":\s*"(?:view|read|list|show|get|cat|search|find)"', re.IGNORECASE)
_CHANGE_ARGS = re.compile(
    r"\bsed\s+(?:-\w+\s+)*-i|\bperl\s+-\w*i|(?<![0-9&>-])>>?\s*(?!&|/dev/null)[\w./~\"'$]|\btee\b|\bpatch\b"
    r"|\bgit\s+(?:apply|am|checkout|commit|stash|reset|restore|cherry-pick|merge|rebase|mv|rm)\b"
    r"|(?:^|[;&|(\s\"])(?:mv|cp|rm|touch|mkdir|ln|chmod)\s|\b(?:pip3?|uv|npm|yarn|pnpm|apt(?:-get)?)\s+(?:add|install)\b"
    r"|\.write(?:_text|_bytes)?\(|\bopen\([^)]*[\"'][wax]\+?[\"']",
)
# ``_CHANGE_ARGS`` alternative by alternative (a match of any is a match of the whole), each starting with
# its literal word, which the engine skips to instead of trying every position: what came before the
# word is checked after it by a lookbehind (``sed(?<!\wsed)`` is ``\bsed``). The installers' alternative
# has no such word and is searched only where "add" or "install" is.
_CHANGE_SEARCHES = tuple(
    re.compile(pattern).search
    for pattern in (
        r"sed(?<!\wsed)\s+(?:-\w+\s+)*-i",
        r"perl(?<!\wperl)\s+-\w*i",
        r">(?<![0-9&>-]>)>?\s*(?!&|/dev/null)[\w./~\"'$]",
        r"tee(?<!\wtee)\b",
        r"patch(?<!\wpatch)\b",
        r"git(?<!\wgit)\s+(?:apply|am|checkout|commit|stash|reset|restore|cherry-pick|merge|rebase|mv|rm)\b",
        *(rf"{word}(?<![^;&|(\s\"]{word})\s" for word in ("mv", "cp", "rm", "touch", "mkdir", "ln", "chmod")),
        r"\.write(?:_text|_bytes)?\(",
        r"open\((?<!\wopen\()[^)]*[\"'][wax]\+?[\"']",
    )
)
_INSTALLS = re.compile(r"\b(?:pip3?|uv|npm|yarn|pnpm|apt(?:-get)?)\s+(?:add|install)\b")


def changes(tool: str, args_text: str) -> bool:
    if _CHANGE_TOOL.search(tool):
        return not _READ_COMMAND.search(args_text)
    if any(search(args_text) is not None for search in _CHANGE_SEARCHES):
        return True
    return ("add" in args_text or "install" in args_text) and _INSTALLS.search(args_text) is not None


def make_tool_step(
    tool: str | None,
    args: str | Mapping[str, Any] | None,
    result: Any = None,
    *,
    is_error: bool | None = None,
    text: str | None = None,
    freeform: bool = False,
) -> Step:
    """A tool-call step.

    ``args``: a JSON string or a mapping (``freeform=True``: free text, e.g. an OpenAI custom tool's
    input). ``result``: the tool output (string or content parts), ``None`` while pending.
    ``is_error``: the explicit error flag; ``None`` applies ``looks_like_error`` to the result.
    ``text``: the assistant text of the turn that made the call. A missing tool name or non-JSON
    arguments (unless free-form) make the step ``MALFORMED``.
    """
    if freeform:
        args_text, valid = (args if isinstance(args, str) else canonical_json(args)), True
    else:
        args_text, valid = _args_text(args)
    result_hash, error = result_fields(result, is_error)
    name = tool or ""
    return Step(
        kind=StepKind.TOOL_CALL if valid and name else StepKind.MALFORMED,
        tool=name,
        args_hash=digest(stable_args_text(args_text)),
        result_hash=result_hash,
        is_error=error,
        text_hash=digest(text) if text else None,
        summary=_summary(f"{name} {args_text}"),
        waits=waits(name, args_text),
        changes=changes(name, args_text),
    )


def make_text_step(text: str | None, reply: Any = None) -> Step:
    """A reply with no tool call; ``reply`` is the next user message, if any. Blank text is ``EMPTY``."""
    if not text or not text.strip():
        return make_empty_step(reply)
    return Step(
        kind=StepKind.TEXT,
        text_hash=digest(text),
        result_hash=None if reply is None else digest(content_text(reply)),
        summary=_summary(text),
    )


def make_empty_step(reply: Any = None) -> Step:
    """An assistant turn with neither text nor tool calls."""
    return Step(
        kind=StepKind.EMPTY,
        result_hash=None if reply is None else digest(content_text(reply)),
        summary="(empty response)",
    )


def make_malformed_step(raw: str = "", reply: Any = None) -> Step:
    """A response the harness could not use (e.g. an unparsable tool call), for consumers that know."""
    return Step(
        kind=StepKind.MALFORMED,
        text_hash=digest(raw) if raw else None,
        result_hash=None if reply is None else digest(content_text(reply)),
        summary=_summary(raw) or "(malformed response)",
    )
