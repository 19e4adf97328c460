"""The router's side of its execution processes: forking one, and the books on the calls sent to it
(docs/executor.md, "The Python Executor").
"""

import collections
import ctypes
import os
import signal
import socket
import sys

from blockx_executor import own_pidns, shm
from blockx_executor.frames import FrameDecoder, OutBuffer
from blockx_executor.no_signals import forbid_signals_to_router
from blockx_executor.tenants import NO_TENANT

# Imported here, before any fork, so a new execution process starts with asyncio and the SDK loaded
# (importing them in each child made a replacement take ~180 ms instead of a few ms).
from blockx_executor.unit import run_unit

PR_SET_PDEATHSIG = 1


class Call:
    """One attempt the router accepted and has not finished."""

    __slots__ = (
        "key", "call_id", "attempt", "task_id", "epoch", "budget_s", "raw", "tenant", "order", "unit", "seq",
        "picked_at", "waiting", "waited_any", "wait_since", "waited_s", "cancel_reason", "hard_deadline", "done",
    )

    def __init__(self, key, m, raw, order):
        self.key = key
        self.call_id = m["callId"]
        self.attempt = m["attempt"]
        self.task_id = m["taskId"]
        self.epoch = m["codeEpoch"]
        self.budget_s = m["budgetMs"] / 1000.0
        self.raw = raw
        self.tenant = m.get("tenant") or NO_TENANT
        # Its place among the calls the router took: tenants' queues are read oldest call first.
        self.order = order
        self.unit = None
        self.seq = -1
        self.picked_at = None
        self.waiting = 0
        self.waited_any = False
        self.wait_since = 0.0
        self.waited_s = 0.0
        self.cancel_reason = None
        self.hard_deadline = None
        self.done = False

    def run_time(self, now):
        """Seconds on its process, time waiting on the Worker excluded (the safety net's measure)."""
        if self.picked_at is None:
            return 0.0
        waited = self.waited_s + (now - self.wait_since if self.waiting else 0.0)
        return now - self.picked_at - waited


class UnitHandle:
    __slots__ = (
        "index", "pid", "sock", "page", "ready", "dead", "next_seq", "unpicked", "calls", "load",
        "cancelling", "epochs", "out", "decoder", "writing", "started_at", "tenant", "reserved_for", "nested",
        "work_pid",
    )

    def __init__(self, index, pid, sock, page, max_frame_bytes, now, nested=False):
        self.index = index
        # The process the router waits for and kills: the execution process, or with `nested` the init of
        # its PID namespace (own_pidns.py), whose end ends the namespace.
        self.pid = pid
        self.nested = nested
        # The execution process itself, once its ready frame named it (its memory is the one bounded).
        self.work_pid = pid
        self.sock = sock
        self.page = page
        self.ready = False
        self.dead = False
        self.next_seq = 0
        # Sent and (as far as the router knows) not picked yet, in the order sent.
        self.unpicked = collections.deque()
        self.calls = {}
        # Calls on it that are neither waiting on the Worker nor done (bounded by --max-calls-per-thread).
        self.load = 0
        self.cancelling = 0
        self.epochs = set()
        self.out = OutBuffer()
        self.decoder = FrameDecoder(2 * max_frame_bytes + 64)
        self.writing = False
        self.started_at = now
        # The tenant of the calls it took last (its whole life's, with --isolation task), and the tenant
        # waiting for it to drain (tenants.py).
        self.tenant = None
        self.reserved_for = None

    def healthy(self, now, stuck_s):
        if not self.ready or self.dead or self.cancelling:
            return False
        return now - shm.beat_at(self.page) < stuck_s

    def rss_bytes(self):
        return rss_of(self.work_pid)


def rss_of(pid):
    """Resident set size of a process from /proc (Linux); 0 where it cannot be read."""
    try:
        with open("/proc/%s/statm" % pid, "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _die_with_parent():
    """Linux: SIGKILL this process when the router dies, even while a function spins."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def fork_unit(index, options, close_fds, max_frame_bytes, now, nest=0):
    """Fork execution process `index`. The child closes `close_fds` (the Worker socket among them) before
    any function code can run, then serves calls until its router goes away. With `nest` (own_pidns.py's
    unshare flags) it runs in a PID namespace of its own. Returns (handle, None), or (None, why) when the
    namespace could not be made (nothing of it is left running)."""
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    page = shm.create()
    parent_pid = os.getpid()
    report_r, report_w = os.pipe() if nest else (-1, -1)
    pid = os.fork()
    if pid == 0:  # the child
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            if nest:
                os.close(report_r)
                parent_sock.close()
                _close_all(close_fds())
                # Returns in the execution process only (the helper and the init never do).
                own_pidns.enter(nest, report_w, [child_sock.fileno()], parent_pid)
            else:
                _die_with_parent()
                if os.getppid() != parent_pid:
                    os._exit(0)
                parent_sock.close()
                _close_all(close_fds())
            own_pidns.set_dumpable(True)  # the router is not (own_pidns.set_dumpable); this process is, as before
            # No signals to the router or its group from function code (no_signals.py). In a namespace of
            # its own the router has no pid to aim at; 0 and -1 stay refused.
            forbid_signals_to_router(None if nest else parent_pid, None if nest else os.getpgid(parent_pid))
            run_unit(child_sock, page, index, options, options["functions_dir"])
        finally:
            os._exit(1)
    child_sock.close()
    if nest:
        os.close(report_w)
        report = b""
        while True:
            chunk = os.read(report_r, 256)
            if not chunk:
                break
            report += chunk
        os.close(report_r)
        os.waitpid(pid, 0)  # the helper, gone once it reported
        answer = own_pidns.read_report(report)
        if answer[0] != "pid":
            parent_sock.close()
            if answer[0] == "refused":
                return None, answer[1]
            # This fork failed (as a failed os.fork() would raise): the namespaces stay on.
            raise OSError(answer[1], "cannot fork execution process %d in a PID namespace of its own: %s"
                          % (index, answer[2]))
        pid = answer[1]
    parent_sock.setblocking(False)
    return UnitHandle(index, pid, parent_sock, page, max_frame_bytes, now, nested=bool(nest)), None
