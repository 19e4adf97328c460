"""The router's upkeep of its execution processes (docs/executor.md, "The Python Executor"): starting,
losing and replacing one, the 25 ms sweep (dead processes, which calls were picked up, CallStarted,
hard limits of cancelled calls) and the heartbeat (the safety net, memory bounds, the Heartbeat frame).
A mixin of Router, split out to keep each file readable.
"""

import json
import os
import selectors
import signal

from blockx_executor import own_pidns, shm
from blockx_executor.logs import log_line
from blockx_executor.outcome import failed_frame
from blockx_executor.units import fork_unit, rss_of

STARTED_AFTER_S = 0.025
MAX_FAILED_STARTS = 5
STUCK_AFTER_S = 0.05
MIB = 1024 * 1024
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RouterUpkeep:
    def _spawn(self, index):
        fds = lambda: [self.conn.fileno(), self.wake_r, self.wake_w] + [u.sock.fileno() for u in self.units if not u.dead]
        u, why = fork_unit(index, self.o, fds, self.max_frame_bytes, self.now, self.nest)
        if u is None:
            self._no_nesting(why)
            u = fork_unit(index, self.o, fds, self.max_frame_bytes, self.now)[0]
        self.sel.register(u.sock, selectors.EVENT_READ, u)
        return u

    def _no_nesting(self, why):
        """Execution processes share the router's PID namespace from now on, with one warning."""
        self.nest = 0
        log_line("warn", "execution processes run without a PID namespace of their own, so a function can "
                 "signal the other execution processes of this executor (and their calls are retried): %s. "
                 "Set %s=off in the executor's environment to drop this warning (docs/security.md)"
                 % (why, own_pidns.OFF_ENV))

    def _reap(self, u, kill, reaped=False):
        """Mark `u` dead, kill and wait for it; its wait status, when this call waited for it."""
        if u.dead:
            return None
        u.dead = True
        status = None
        if not reaped:
            if kill:
                try:
                    os.kill(u.pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                status = os.waitpid(u.pid, 0)[1]
            except ChildProcessError:
                pass
        try:
            self.sel.unregister(u.sock)
        except (KeyError, ValueError):
            pass
        u.sock.close()
        return status

    def _unit_gone(self, u, why, overdue=None, code=None, reaped=False, status=None):
        """Execution process `u` exited or was killed: fail what ran on it, route again what never did."""
        if u.dead:
            return
        waited = self._reap(u, kill=True, reaped=reaped)
        status = waited if status is None else status
        if (code is None and overdue is None and status is not None
                and own_pidns.ended_by_signal(status, u.nested) == signal.SIGKILL and self.oom.new_kills() > 0):
            limit = self.oom.limit_text()
            why = "was ended by the kernel at the executor's memory ceiling (%sexecutor.memoryMaxMb)" % (
                limit + ", " if limit else "")
            code = "EXECUTOR_MEMORY_LIMIT"
        picked, _ = shm.picked(u.page)
        again = []
        for c in list(u.calls.values()):
            if c is overdue:
                self._end(c, failed_frame(c.call_id, c.attempt, "deadline", True,
                                          "cut off: still running %d ms after it was cancelled (%s); its "
                                          "execution process was terminated" % (self.o["cancel_hard_limit_ms"],
                                                                                c.cancel_reason)))
            elif c.seq < picked:
                self._end(c, failed_frame(c.call_id, c.attempt, "executor_crash", True,
                                          "execution process %d (pid %d) %s while the call ran" % (u.index, u.pid, why),
                                          code=code))
            elif c.cancel_reason is not None:
                self._end(c, failed_frame(c.call_id, c.attempt, "deadline", True,
                                          "cancelled before it started (%s)" % c.cancel_reason))
            else:
                again.append(c)
        u.calls.clear()
        if not u.ready and overdue is None:
            self.failed_starts += 1
            if self.failed_starts >= MAX_FAILED_STARTS:
                log_line("error", "execution process %d (pid %d) %s before it was ready, %d times in a row; "
                         "stopping" % (u.index, u.pid, why, self.failed_starts))
                self.stop("execution processes cannot start")
                return
        log_line("warn" if overdue is None else "info", "execution process %d (pid %d) %s; replacing it" % (u.index, u.pid, why))
        self._replace(u)
        for c in reversed(again):  # they came before anything still queued of their tenant
            c.unit = None
            c.seq = -1
            self._enqueue(c, first=True)

    def _replace(self, u):
        """A fresh process in the place of `u` (reaped), holding its reservation (tenants.py)."""
        replacement = self._spawn(u.index)
        replacement.reserved_for = u.reserved_for
        self.units[self.units.index(u)] = replacement

    def _renew(self, u):
        """`u` served another tenant and is empty: a fresh process takes the tenant waiting for it."""
        self._reap(u, kill=True)
        self._replace(u)

    # ---- timers -----------------------------------------------------------------------------------

    def _sweep(self):
        now = self.now
        for u in list(self.units):
            if u.dead:
                continue
            status = None
            try:
                pid, status = os.waitpid(u.pid, os.WNOHANG)
            except ChildProcessError:
                pid = u.pid
            if pid:
                self._unit_gone(u, "exited", reaped=True, status=status)
                continue
            picked, pick_t = shm.picked(u.page)
            while u.unpicked and u.unpicked[0].seq < picked:
                c = u.unpicked.popleft()
                if not c.done:
                    c.picked_at = pick_t if c.seq == picked - 1 else min(now, pick_t)
                    self.watch_started.append(c)
        if self.reaps_orphans:
            self._reap_orphans()
        if self.watch_started:
            keep = []
            for c in self.watch_started:
                if c.done or c.waited_any:
                    continue
                if now - c.picked_at >= STARTED_AFTER_S:
                    self._send(_dumps({"type": "CallStarted", "callId": c.call_id, "attempt": c.attempt,
                                       "elapsedMs": round((now - c.picked_at) * 1000, 3)}).encode())
                else:
                    keep.append(c)
            self.watch_started = keep
        for c in list(self.cancelling.values()):
            if c.done or c.unit is None or now < c.hard_deadline:
                continue
            if c.picked_at is None and shm.picked(c.unit.page)[0] <= c.seq:
                # Never started, behind a call that keeps its process busy: it fails now and is ignored
                # when that process gets to it (it would start cancelled).
                c.unit.load -= 1 if c.waiting == 0 else 0
                self._end(c, failed_frame(c.call_id, c.attempt, "deadline", True,
                                          "cancelled before it started (%s)" % c.cancel_reason))
            else:
                self._unit_gone(c.unit, "was terminated: a cancelled call outran the hard limit", overdue=c)

    def _reap_orphans(self):
        """As init of its PID namespace (or a subreaper) the router inherits every process orphaned below it
        (a function's child that exited before its own children, where execution processes share its
        namespace): wait for those that ended, or they stay zombies and count against
        executor.maxProcesses. An execution process is left to the loop above, which needs its
        status; WNOWAIT looks without taking it."""
        own = {u.pid for u in self.units if not u.dead}
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or info.si_pid in own:
                return
            try:
                os.waitpid(info.si_pid, os.WNOHANG)
            except ChildProcessError:
                pass

    def _heartbeat(self):
        now = self.now
        for c in list(self.calls.values()):
            if c.cancel_reason is None and c.budget_s > 0 and c.picked_at is not None and not c.waiting:
                if c.run_time(now) > c.budget_s + max(1.0, c.budget_s):
                    self._cancel({"callId": c.call_id, "attempt": c.attempt},
                                 "ran %d ms without a CancelCall: past budgetMs %d plus its grace (safety net)"
                                 % (c.run_time(now) * 1000, c.budget_s * 1000))
        rss = rss_of(os.getpid())
        live = [u for u in self.units if not u.dead]
        sizes = [(u.rss_bytes(), u) for u in live]
        rss += sum(s for s, _ in sizes)
        limit = self.o["unit_memory_mb"] * MIB
        for size, u in sizes:
            if limit and size > limit:
                self._unit_gone(u, "was terminated: RSS %d MiB is over --thread-memory-mb %d"
                                % (size // MIB, self.o["unit_memory_mb"]), code="EXECUTOR_MEMORY_LIMIT")
        if self.o["max_rss_mb"] and rss > self.o["max_rss_mb"] * MIB and sizes:
            size, u = max(sizes, key=lambda s: s[0])
            if not u.dead:
                self._unit_gone(u, "was terminated: executor RSS %d MiB is over --max-rss-mb %d"
                                % (rss // MIB, self.o["max_rss_mb"]), code="EXECUTOR_MEMORY_LIMIT")
        self._send(_dumps({
            "type": "Heartbeat", "seq": self.hb_seq, "pid": os.getpid(), "inflight": len(self.calls),
            "queued": self.queued(), "threads": sum(1 for u in self.units if u.ready and not u.dead),
            "epochs": self.epochs.count(), "rssBytes": rss,
        }).encode())
        self.hb_seq += 1
