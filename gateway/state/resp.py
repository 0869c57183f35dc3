"""Commands in the Redis protocol (RESP arrays of bulk strings), for a batch sent in one write.

redis-py encodes each argument through its Encoder and each command through chunking logic made for
multi-megabyte values: for a request's batch of short commands that was the largest part of the client's
CPU (issue 28). hiredis (already the reply parser) packs each command in C, as redis-py does (str as
UTF-8, int and float as their repr, bytes as they are) and refusing a bool as redis-py does: about a
third of the CPU of doing it in Python (the 22 commands of a session request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import hiredis

Arg = bytes | str | int | float


def packed(commands: Iterable[Sequence[Arg]]) -> bytes:
    # hiredis's stub types the command as a one-item tuple; it takes any number of arguments.
    pack = cast(Callable[[tuple[Any, ...]], bytes], hiredis.pack_command)
    return b"".join([pack(command if type(command) is tuple else tuple(command)) for command in commands])
