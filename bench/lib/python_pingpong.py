"""The raw Python baseline of bench/calls.ts: a standard-library echo server on a Unix socket with the
executor's framing (4-byte big-endian length, UTF-8 JSON). Each ExecuteCall frame is parsed and answered
with a CallCompleted, and the answers to one read are written with one send, as the executor batches.

    python3 bench/lib/python_pingpong.py SOCKET_PATH      (prints "listening" once bound)

It serves one connection and exits when it closes.
"""

import json
import os
import socket
import struct
import sys

HEADER = struct.Struct(">I")


def serve(path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    sys.stdout.write("listening\n")
    sys.stdout.flush()
    conn, _ = server.accept()
    server.close()
    buf = bytearray()
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    unpack = HEADER.unpack_from
    pack = HEADER.pack
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            return
        buf += chunk
        out = []
        offset = 0
        size = len(buf)
        while size - offset >= 4:
            (length,) = unpack(buf, offset)
            end = offset + 4 + length
            if end > size:
                break
            m = json.loads(bytes(buf[offset + 4 : end]))
            reply = dumps({"type": "CallCompleted", "callId": m["callId"], "attempt": m["attempt"], "value": None}).encode()
            out.append(pack(len(reply)))
            out.append(reply)
            offset = end
        del buf[:offset]
        if out:
            conn.sendall(b"".join(out))


if __name__ == "__main__":
    serve(sys.argv[1])
