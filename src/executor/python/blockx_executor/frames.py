"""Length-prefixed frames: a 4-byte big-endian payload length, then the payload (docs/executor.md,
"Framing"). The same codec carries the Worker connection (UTF-8 JSON payloads) and the router's pipes to
its execution processes (a one-byte tag, then the payload).

The decoder is incremental: chunks may split or join frames anywhere. A declared length above the limit
is a protocol error (FrameTooLarge) and the stream is corrupt from there on: close it.
"""

import json
import struct

DEFAULT_MAX_FRAME_BYTES = 65 * 1024 * 1024
HEADER = struct.Struct(">I")
HEADER_BYTES = 4


class ProtocolError(Exception):
    """A frame that breaks the protocol; the connection is closed."""


class FrameTooLarge(ProtocolError):
    def __init__(self, size, limit, direction):
        super().__init__(
            "frame of %d bytes is over the limit of %d bytes (%s)" % (size, limit, direction)
        )
        self.size = size
        self.limit = limit


class FrameDecoder:
    """Feed chunks with push(); it returns the payloads (bytes) of the frames they completed."""

    __slots__ = ("max_bytes", "_buf")

    def __init__(self, max_bytes=DEFAULT_MAX_FRAME_BYTES):
        self.max_bytes = max_bytes
        self._buf = bytearray()

    @property
    def pending_bytes(self):
        return len(self._buf)

    def push(self, chunk):
        buf = self._buf
        buf += chunk
        out = []
        offset = 0
        size = len(buf)
        unpack = HEADER.unpack_from
        while size - offset >= HEADER_BYTES:
            (length,) = unpack(buf, offset)
            if length > self.max_bytes:
                raise FrameTooLarge(length, self.max_bytes, "decode")
            end = offset + HEADER_BYTES + length
            if end > size:
                break
            out.append(bytes(buf[offset + HEADER_BYTES : end]))
            offset = end
        if offset:
            del buf[:offset]
        return out


def frame(payload):
    """One frame around `payload` (bytes)."""
    return HEADER.pack(len(payload)) + payload


_decode = json.JSONDecoder().decode


def loads(payload):
    """JSON of a UTF-8 payload (bytes), without json.loads' encoding sniffing."""
    return _decode(payload.decode("utf-8"))


def parse_message(payload):
    """A frame's JSON object with a string `type`, or ProtocolError."""
    try:
        value = _decode(payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise ProtocolError("payload is not JSON (%s)" % err) from None
    if type(value) is not dict:
        raise ProtocolError("payload is not a JSON object")
    if type(value.get("type")) is not str:
        raise ProtocolError('payload has no string "type"')
    return value


class OutBuffer:
    """Frames queued during one turn of a loop, joined and written together (one syscall per turn)."""

    __slots__ = ("parts", "pending")

    def __init__(self):
        self.parts = []
        # Bytes of an earlier write the socket did not take yet.
        self.pending = b""

    def add(self, payload):
        self.parts.append(HEADER.pack(len(payload)))
        self.parts.append(payload)

    def has_data(self):
        return bool(self.parts) or bool(self.pending)

    def write_to(self, sock):
        """Write what the socket takes now (non-blocking); True when everything went out."""
        if self.parts:
            self.pending = self.pending + b"".join(self.parts) if self.pending else b"".join(self.parts)
            self.parts = []
        data = self.pending
        view = memoryview(data)
        offset = 0
        while offset < len(data):
            try:
                offset += sock.send(view[offset:])
            except (BlockingIOError, InterruptedError):
                break
        self.pending = data[offset:] if offset else data
        return offset == len(data)
