"""Length-prefixed JSON frames between the host and the sandbox worker.

Both sides import this module, so it stays stdlib-only. Frames travel on dedicated pipe
file descriptors, never on the cell's stdout: whatever the cell prints cannot forge or
break a message. A frame is a 4-byte big-endian length followed by that many bytes of
UTF-8 JSON (one object with a ``type`` key).

host → worker: ``setup`` (limits, namespace, uid), ``exec`` (code; the request's
``folder`` and ``named`` files, for relative paths), ``reply`` (to a
call: ``ok`` with ``value`` or ``error``), ``interrupt``.
worker → host: ``ready``, ``call`` (``id``, ``kind``, ``payload``), ``done`` (status,
error, value).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable

HEADER = struct.Struct(">I")
# Larger frames mean a broken or hostile peer; the host kills the worker.
MAX_FRAME = 64 * 1024 * 1024


class ProtocolError(Exception):
    """A malformed frame, or the other side closed the channel."""


def encode(message: dict, default: Callable[[object], object] | None = None) -> bytes:
    """One frame; ``default`` as in json.dumps, for values JSON cannot hold."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"),
                      default=default).encode()
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"message of {len(body)} bytes exceeds {MAX_FRAME}")
    return HEADER.pack(len(body)) + body


def write_frame(fd: int, message: dict | bytes) -> None:
    """Write one frame: a message, or what encode() already made of one."""
    data = memoryview(message if isinstance(message, bytes) else encode(message))
    while data:
        data = data[os.write(fd, data):]


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ProtocolError("channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict:
    """Blocking read of one frame (the worker's side)."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size))
    if size > MAX_FRAME:
        raise ProtocolError(f"frame of {size} bytes exceeds {MAX_FRAME}")
    return decode(_read_exact(fd, size))


def decode(body: bytes) -> dict:
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"undecodable frame: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("frame is not an object with a type")
    return message


class FrameBuffer:
    """Incremental decoder for the host's non-blocking reads."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[dict]:
        self._buf += data
        frames = []
        while len(self._buf) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buf)
            if size > MAX_FRAME:
                raise ProtocolError(f"frame of {size} bytes exceeds {MAX_FRAME}")
            end = HEADER.size + size
            if len(self._buf) < end:
                break
            frames.append(decode(bytes(self._buf[HEADER.size:end])))
            del self._buf[:end]
        return frames
