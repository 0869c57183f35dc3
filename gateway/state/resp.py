"""Commands in the Redis protocol (RESP arrays of bulk strings), for a batch sent in one write.

redis-py encodes each argument through its Encoder and each command through chunking logic made for
multi-megabyte values: for a request's batch of short commands that was the largest part of the client's
CPU (issue 28). The encoding is redis-py's (str as UTF-8, int and float as their repr, bytes as they
are); a bool, which Redis has no type for, is refused as redis-py refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Arg = bytes | str | int | float


def _encoded(arg: Arg) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, bool) or not isinstance(arg, int | float):
        raise TypeError(f"a Redis argument is bytes, str, int or float, not {type(arg).__name__}")
    return repr(arg).encode()


def packed(commands: Iterable[Sequence[Arg]]) -> bytes:
    pieces: list[bytes] = []
    for command in commands:
        pieces.append(b"*%d\r\n" % len(command))
        for arg in command:
            data = _encoded(arg)
            pieces += (b"$%d\r\n" % len(data), data, b"\r\n")
    return b"".join(pieces)
