"""The page an execution process shares with the router (an anonymous MAP_SHARED mmap made before the
fork), so the router learns what the process is doing without a message per call, even while a
function spins and the process cannot send anything (docs/executor.md, "The Python Executor"):

    0   double  beat: time.monotonic() of the process's last beat (every 10 ms and per batch)
    8   int64   picked: calls started so far (the process starts calls in the order it got them)
    16  double  time.monotonic() of the latest pickup
    24  int64   cancel ring head (written by the router)
    32  int64[64] the per-process sequence numbers of the latest cancelled calls (router), so
            `ctx.cancelled` sees a cancel while a synchronous function keeps the process from reading
"""

import mmap
import struct

BEAT = struct.Struct("d")
PICK = struct.Struct("qd")
HEAD = struct.Struct("q")
RING_SLOTS = 64
RING = struct.Struct("%dq" % RING_SLOTS)
SIZE = 32 + RING.size


def create():
    page = mmap.mmap(-1, SIZE, flags=mmap.MAP_SHARED)
    RING.pack_into(page, 32, *([-1] * RING_SLOTS))
    return page


def beat_at(page):
    return BEAT.unpack_from(page, 0)[0]


def picked(page):
    """(calls picked, monotonic time of the latest pickup)."""
    return PICK.unpack_from(page, 8)


def mark_cancelled(page, seq):
    (head,) = HEAD.unpack_from(page, 24)
    struct.pack_into("q", page, 32 + (head % RING_SLOTS) * 8, seq)
    HEAD.pack_into(page, 24, head + 1)


def is_cancelled(page, seq):
    return seq in RING.unpack_from(page, 32)
