"""The executor's main process: the Worker connection, routing, deadlines (docs/executor.md, "The Python
Executor"). It runs no function code. One thread, one selector loop; the clock is read once per turn.
Frames queued during a turn are written together at its end, on every socket.
"""

import collections
import json
import os
import selectors
import signal
import time

from blockx_executor import own_pidns, shm
from blockx_executor.epochs import EPOCH_UNKNOWN, EpochStore
from blockx_executor.cgroup_oom import OomCount
from blockx_executor.frames import FrameDecoder, OutBuffer, ProtocolError, parse_message
from blockx_executor.logs import log_line
from blockx_executor.outcome import failed_frame
from blockx_executor.router_upkeep import STUCK_AFTER_S, RouterUpkeep
from blockx_executor.tenants import place_tenant_calls, tenant_problem
from blockx_executor.units import Call

SWEEP_S = 0.025
PARENT_CHECK_S = 1.0
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def check_execute_call(m):
    """What is wrong with an ExecuteCall, or None (executor-main.ts checkExecuteCall)."""
    get = m.get
    v = get("callId")
    if type(v) is not str or v == "":
        return "callId must be a non-empty string"
    v = get("attempt")
    if type(v) is not int or v < 1:
        return "attempt must be a positive integer"
    if type(get("taskId")) is not str:
        return "taskId must be a string"
    v = get("function")
    if type(v) is not str or v == "":
        return "function must be a non-empty string"
    v = get("codeEpoch")
    if type(v) is not str or v == "":
        return "codeEpoch must be a non-empty string"
    if type(get("args")) is not list:
        return "args must be an array"
    v = get("budgetMs")
    if (type(v) is not int and type(v) is not float) or v < 0:
        return "budgetMs must be a number >= 0"
    v = get("ioCache")
    if v is not None and (type(v) is not str or v == ""):
        return "ioCache must be a non-empty string when present"
    return tenant_problem(get("tenant"))


class Router(RouterUpkeep):
    def __init__(self, conn, options, max_frame_bytes):
        self.conn = conn
        self.o = dict(options, max_frame_bytes=max_frame_bytes)
        self.max_frame_bytes = max_frame_bytes
        self.failed_starts = 0
        self.hard_limit_s = options["cancel_hard_limit_ms"] / 1000.0
        self.sel = selectors.DefaultSelector()
        self.decoder = FrameDecoder(max_frame_bytes)
        self.out = OutBuffer()
        self.conn_writing = False
        self.epochs = EpochStore(options["functions_dir"])
        self.calls = {}
        # Calls no process has taken yet: a queue per tenant, each in arrival order (Call.order).
        self.queue = {}
        self.arrivals = 0
        # With --isolation task a process serves one tenant in its life (tenants.py, `sticky`).
        self.sticky = options["isolation"] == "task"
        self.units = []
        self.cancelling = {}
        self.watch_started = []
        self.now = time.monotonic()
        self.stop_reason = None
        self.shutdown_at = None
        self.beating = False
        self.hb_seq = 0
        self.parent = os.getppid()
        # init of its PID namespace: the processes a function's children leave behind become its own.
        self.init = os.getpid() == 1
        # Each execution process in a PID namespace of its own (own_pidns.py): the unshare flags, 0 when
        # off or not possible here. The router waits for the processes orphaned below it (a namespace's
        # init, once the helper that made it exits) as init of its own namespace, else as a subreaper.
        self.nest = options["nest"]
        self.reaps_orphans = self.init
        self.wake_r, self.wake_w = os.pipe()
        # The Worker has put this process in the executor's cgroup by now (it does so right after spawn).
        self.oom = OomCount()

    # ---- life -------------------------------------------------------------------------------------

    def run(self):
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        if self.init:
            # PID 1 of its own PID namespace (docs/security.md, "An Executor as PID 1 of its own PID
            # namespace"): a signal from a function's child process reaches it only if it is handled, so
            # none is (SIGINT would raise KeyboardInterrupt). The Worker stops it by closing its socket.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        else:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop("signal"))
        # Its memory shut to its execution processes (same user): not dumpable (own_pidns.set_dumpable).
        own_pidns.set_dumpable(False)
        if self.nest and not self.init:
            self.reaps_orphans = own_pidns.become_subreaper()
            if not self.reaps_orphans:
                self._no_nesting("prctl(PR_SET_CHILD_SUBREAPER) failed")
        self.conn.setblocking(False)
        self.sel.register(self.conn, selectors.EVENT_READ, None)
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        for i in range(self.o["units"]):
            self.units.append(self._spawn(i))
        interval = self.o["heartbeat_interval_ms"] / 1000.0
        next_sweep = next_beat = next_parent = self.now
        try:
            while self.stop_reason is None:
                timeout = max(0.0, min(next_sweep, next_beat if self.beating else next_sweep) - time.monotonic())
                events = self.sel.select(timeout)
                self.now = time.monotonic()
                for key, mask in events:
                    self._event(key, mask)
                    if self.stop_reason is not None:
                        break
                if self.now >= next_sweep:
                    next_sweep = self.now + SWEEP_S
                    self._sweep()
                if self.beating and self.now >= next_beat:
                    next_beat = self.now + interval
                    self._heartbeat()
                if self.now >= next_parent:
                    next_parent = self.now + PARENT_CHECK_S
                    if os.getppid() != self.parent:
                        self.stop("parent %d is gone" % self.parent)
                if self.queue:
                    self._drain_queue()
                if self.shutdown_at is not None and (not self.calls or self.now >= self.shutdown_at):
                    self.stop(self.shutdown_reason)
                self._flush()
        finally:
            self._close()
        return self.stop_reason

    def stop(self, reason):
        if self.stop_reason is None:
            self.stop_reason = reason

    def _close(self):
        for u in self.units:
            self._reap(u, kill=True)
        try:
            self.conn.setblocking(True)
            self.conn.settimeout(1.0)
            if self.out.parts or self.out.pending:
                self.conn.sendall(self.out.pending + b"".join(self.out.parts))
        except OSError:
            pass
        self.conn.close()

    # ---- sockets ----------------------------------------------------------------------------------

    def _event(self, key, mask):
        if key.data == "wake":
            try:
                os.read(self.wake_r, 512)
            except OSError:
                pass
            return
        if mask & selectors.EVENT_WRITE:
            if key.data is None:
                self._write_conn()
            elif not key.data.dead:
                self._write_unit(key.data)
        if not mask & selectors.EVENT_READ:
            return
        if key.data is None:
            self._read_conn()
        elif not key.data.dead:
            self._read_unit(key.data)

    def _read_conn(self):
        try:
            data = self.conn.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as err:
            self.stop("socket error: %s" % err)
            return
        if not data:
            self.stop("connection closed")
            return
        try:
            for payload in self.decoder.push(data):
                self._message(parse_message(payload), payload)
        except ProtocolError as err:
            log_line("error", "protocol error, closing: %s" % err)
            self.stop("protocol error: %s" % err)
        except Exception as err:  # a frame that parses but cannot be handled (executor-main.ts)
            log_line("error", "protocol error, closing: cannot handle a frame: %r" % err)
            self.stop("protocol error: %r" % err)

    def _flush(self):
        if not self.conn_writing and self.out.parts:
            self._write_conn()
        for u in self.units:
            if not u.dead and not u.writing and u.out.parts:
                self._write_unit(u)

    def _write_conn(self):
        try:
            done = self.out.write_to(self.conn)
        except OSError as err:
            self.stop("socket error: %s" % err)
            return
        if done != (not self.conn_writing):
            self.conn_writing = not done
            events = selectors.EVENT_READ | (0 if done else selectors.EVENT_WRITE)
            self.sel.modify(self.conn, events, None)

    def _write_unit(self, u):
        try:
            done = u.out.write_to(u.sock)
        except OSError:
            self._unit_gone(u, "its pipe broke")
            return
        if done != (not u.writing):
            u.writing = not done
            self.sel.modify(u.sock, selectors.EVENT_READ | (0 if done else selectors.EVENT_WRITE), u)

    def _send(self, payload):
        self.out.add(payload)

    # ---- Worker frames ----------------------------------------------------------------------------

    def _message(self, m, raw):
        t = m["type"]
        if t == "ExecuteCall":
            self._execute(m, raw)
        elif t == "ExecuteCalls":
            self._execute_many(m)
        elif t == "ResumeCall":
            self._resume(m, raw)
        elif t == "CancelCall":
            self._cancel(m)
        elif t == "DefineEpoch":
            self.epochs.define(m)
        elif t == "RetireEpoch":
            self._retire(m.get("epoch"))
        elif t == "DropIoCache":
            pass  # this executor keeps no read copies: every read goes to the Worker's cache
        elif t == "Shutdown":
            grace = m.get("graceMs")
            grace = grace if isinstance(grace, (int, float)) and not isinstance(grace, bool) else 0
            self.shutdown_reason = "shutdown: %s" % m.get("reason", "")
            self.shutdown_at = self.now + max(0, grace) / 1000.0
        else:
            log_line("warn", "ignoring unknown frame type %s" % t[:40])

    def _execute(self, m, raw):
        problem = check_execute_call(m)
        if problem:
            log_line("error", "ignoring a malformed ExecuteCall: %s" % problem)
            return
        key = ("%s#%d" % (m["callId"], m["attempt"])).encode()
        if key in self.calls:
            log_line("error", "ignoring a second ExecuteCall for attempt %s" % key.decode())
            return
        epoch, why = self.epochs.get(m["codeEpoch"])
        if epoch is None:
            self._send(failed_frame(m["callId"], m["attempt"], "load", False, why, code=EPOCH_UNKNOWN))
            return
        err = epoch.resolve(m["function"])[1]
        if err is not None:
            self._send(failed_frame(m["callId"], m["attempt"], "load", False, err[1], code=err[0]))
            return
        c = Call(key, m, b"X" + raw, self.arrivals)
        self.arrivals += 1
        self.calls[key] = c
        self._enqueue(c)

    def _execute_many(self, m):
        """An ExecuteCalls frame: each entry runs as the ExecuteCall it stands for (docs/executor.md)."""
        calls = m.get("calls")
        if type(calls) is not list:
            log_line("error", "ignoring a malformed ExecuteCalls: calls must be an array")
            return
        head = {k: v for k, v in m.items() if k not in ("type", "calls")}
        for entry in calls:
            one = dict(head, type="ExecuteCall")
            if type(entry) is dict:
                for k in ("callId", "attempt", "args"):
                    if k in entry:
                        one[k] = entry[k]
            self._execute(one, _dumps(one).encode())

    def _enqueue(self, c, first=False):
        q = self.queue.get(c.tenant)
        if q is None:
            q = self.queue[c.tenant] = collections.deque()
        if first:
            q.appendleft(c)
        else:
            q.append(c)

    def _drain_queue(self):
        """Queued calls to processes, never two tenants on one at once (tenants.py); the rest stay queued."""
        healthy = lambda u: u.healthy(self.now, STUCK_AFTER_S)
        queued = sorted(self.queue.items(), key=lambda tq: tq[1][0].order)  # the oldest call first
        placements, renew = place_tenant_calls(self.units, [(t, len(q)) for t, q in queued],
                                               self.o["max_calls_per_unit"], healthy, self.sticky)
        for tenant, u in placements:
            q = self.queue[tenant]
            self._send_to(q.popleft(), u)
            if not q:
                del self.queue[tenant]
        for u in renew:
            self._renew(u)

    def queued(self):
        return sum(len(q) for q in self.queue.values())

    def _send_to(self, c, u):
        if c.epoch not in u.epochs:
            epoch, why = self.epochs.get(c.epoch)
            if epoch is None:
                self._end(c, failed_frame(c.call_id, c.attempt, "load", False, why, code=EPOCH_UNKNOWN))
                return
            u.out.add(b"D" + _dumps({"epoch": c.epoch, "functionsDir": epoch.functions_dir,
                                     "files": epoch.python}).encode())
            u.epochs.add(c.epoch)
        c.unit = u
        c.seq = u.next_seq
        u.next_seq += 1
        u.unpicked.append(c)
        u.calls[c.key] = c
        u.load += 1
        u.tenant = c.tenant
        u.out.add(c.raw)

    def _resume(self, m, raw):
        if not isinstance(m.get("callId"), str) or not isinstance(m.get("attempt"), int):
            log_line("error", "ignoring a malformed ResumeCall")
            return
        c = self.calls.get(("%s#%d" % (m["callId"], m["attempt"])).encode())
        if c is None or c.unit is None or c.waiting == 0:
            return
        c.waiting -= 1
        if c.waiting == 0:
            c.waited_s += self.now - c.wait_since
            c.unit.load += 1
        c.unit.out.add(b"R" + raw)

    def _cancel(self, m, reason=None):
        key = ("%s#%d" % (m.get("callId"), m.get("attempt"))).encode()
        c = self.calls.get(key)
        if c is None or c.cancel_reason is not None:
            return
        reason = reason or m.get("reason") or "cancelled by the worker"
        reason = reason if isinstance(reason, str) else "cancelled by the worker"
        if c.unit is None:  # still queued here: it never started
            q = self.queue.get(c.tenant)
            if q is not None:
                q.remove(c)
                if not q:
                    del self.queue[c.tenant]
            self._end(c, failed_frame(c.call_id, c.attempt, "deadline", True,
                                      "cancelled before it started (%s)" % reason, duration_ms=0))
            return
        c.cancel_reason = reason
        c.hard_deadline = self.now + self.hard_limit_s
        c.unit.cancelling += 1
        self.cancelling[key] = c
        shm.mark_cancelled(c.unit.page, c.seq)
        c.unit.out.add(b"C" + _dumps({"key": key.decode(), "reason": reason}).encode())

    def _retire(self, epoch):
        if not isinstance(epoch, str):
            return
        self.epochs.retire(epoch)
        for u in self.units:
            if epoch in u.epochs and not u.dead:
                u.epochs.discard(epoch)
                u.out.add(b"E" + epoch.encode())

    # ---- execution process frames -----------------------------------------------------------------

    def _read_unit(self, u):
        try:
            data = u.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._unit_gone(u, "exited")
            return
        for p in u.decoder.push(data):
            tag = p[:1]
            klen = int.from_bytes(p[1:5], "big")
            key = p[5 : 5 + klen]
            body = p[5 + klen :]
            c = u.calls.get(key)
            if tag == b"T":
                if c is not None:
                    if c.waiting == 0:
                        u.load -= 1
                    self._end(c, body)
            elif tag == b"W":
                if c is not None:
                    if c.waiting == 0:
                        c.wait_since = self.now
                        u.load -= 1
                    c.waiting += 1
                    c.waited_any = True
                    self._send(body)
            elif tag == b"Y":
                u.ready = True
                if u.nested and body.isdigit():
                    u.work_pid = int(body)
                self.failed_starts = 0
                if not self.beating and all(x.ready for x in self.units if not x.dead):
                    self.beating = True
                    self._heartbeat()

    def _end(self, c, frame_json):
        """The attempt's one terminal frame."""
        c.done = True
        self.calls.pop(c.key, None)
        u = c.unit
        if u is not None:
            u.calls.pop(c.key, None)
            if c.cancel_reason is not None:
                u.cancelling -= 1
                self.cancelling.pop(c.key, None)
        self._send(frame_json)

