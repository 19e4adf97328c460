"""A simulation of the Python executor's router around blockx_executor/tenants.py, for
test/integration/executor/python-tenant-placement.test.ts: no processes, no clock.

Reads one JSON scenario per line on stdin and writes one JSON answer per line:
  {"units": N, "maxCalls": M, "sticky": bool, "ops": [[op, arg], ...], "steady": tenant (optional)}
ops: ["arrive", tenant]; ["complete", k] (the k-th running or waiting call, mod their count, ends);
["wait", k] / ["resume", k] (a running call waits on the Worker / a waiting one resumes); ["drain", k] (every call of the k-th process ends, in one turn); ["cancel",
tenant] (its first queued call goes); ["ready", 0] (every fresh process becomes ready). After each op the
router's turn runs: place_tenant_calls, then the placements and renewals carried out as router.py does.
With "steady", turns go on under pressure (see run) until every call queued after the ops is placed.
Answer: {"trace": [[op index, call id, unit id, tenant] | [op index, "renew", unit id, tenant]],
"violation": text or null, "queued": calls left queued, "turns": turns under pressure}.
The invariants checked after every turn: no process holds calls of two tenants; with sticky, no process
ever took calls of two tenants; no placement beyond maxCalls running calls; no process renewed (killed)
while it holds calls.
"""

import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "executor", "python"))

from blockx_executor.tenants import place_tenant_calls  # noqa: E402


MAX_TURNS = 1000


class FakeUnit:
    def __init__(self, uid, ready):
        self.uid = uid
        self.load = 0
        self.calls = {}
        self.tenant = None
        self.reserved_for = None
        self.dead = False
        self.ready = ready
        self.served = set()


class Sim:
    def __init__(self, n, max_calls, sticky):
        self.max_calls = max_calls
        self.sticky = sticky
        self.next_uid = n
        self.units = [FakeUnit(i, True) for i in range(n)]
        self.queue = {}
        self.next_call = 0
        self.trace = []
        self.tenant_of = {}
        self.violation = None

    def calls(self, waiting):
        out = []
        for u in self.units:
            for cid, state in u.calls.items():
                if (state == "waiting") == waiting:
                    out.append((u, cid))
        return out

    def op(self, i, name, arg):
        if name == "arrive":
            self.queue.setdefault(arg, collections.deque()).append(self.next_call)
            self.next_call += 1
        elif name == "complete":
            live = self.calls(False) + self.calls(True)
            if live:
                u, cid = live[arg % len(live)]
                if u.calls.pop(cid) == "running":
                    u.load -= 1
        elif name == "drain":
            # Every call of the k-th process ends in one turn (the router reads many frames per turn).
            u = self.units[arg % len(self.units)]
            u.calls.clear()
            u.load = 0
        elif name in ("wait", "resume"):
            live = self.calls(name == "resume")
            if live:
                u, cid = live[arg % len(live)]
                u.calls[cid] = "running" if name == "resume" else "waiting"
                u.load += 1 if name == "resume" else -1
        elif name == "cancel":
            q = self.queue.get(arg)
            if q:
                q.popleft()
                if not q:
                    del self.queue[arg]
        elif name == "ready":
            for u in self.units:
                u.ready = True
        else:
            raise ValueError("unknown op %r" % name)
        self.turn(i)

    def turn(self, i):
        placements, renew = place_tenant_calls(
            self.units, [(t, len(q)) for t, q in sorted(self.queue.items(), key=lambda tq: tq[1][0])], self.max_calls,
            lambda u: u.ready, self.sticky)
        for tenant, u in placements:
            q = self.queue[tenant]
            cid = q.popleft()
            if not q:
                del self.queue[tenant]
            if u.load >= self.max_calls and self.violation is None:
                self.violation = "op %d: call %d placed on unit %d with %d running" % (i, cid, u.uid, u.load)
            u.calls[cid] = "running"
            u.load += 1
            u.tenant = tenant
            u.served.add(tenant)
            self.tenant_of[cid] = tenant
            self.trace.append([i, cid, u.uid, tenant])
        for u in renew:
            if u.calls and self.violation is None:
                self.violation = "op %d: unit %d renewed while it holds calls %s" % (i, u.uid, sorted(u.calls))
            fresh = FakeUnit(self.next_uid, False)
            self.next_uid += 1
            fresh.reserved_for = u.reserved_for
            self.units[self.units.index(u)] = fresh
            self.trace.append([i, "renew", u.uid, u.reserved_for])
        for u in self.units:
            tenants = {self.tenant_of[c] for c in u.calls}
            if len(tenants) > 1 and self.violation is None:
                self.violation = "op %d: unit %d holds calls of %s" % (i, u.uid, sorted(tenants))
            if self.sticky and len(u.served) > 1 and self.violation is None:
                self.violation = "op %d: unit %d served %s" % (i, u.uid, sorted(u.served))


def run(s):
    sim = Sim(s["units"], s["maxCalls"], s["sticky"])
    for i, (name, arg) in enumerate(s["ops"]):
        sim.op(i, name, arg)
    turns = 0
    steady = s.get("steady")
    if steady is not None:
        # Under pressure: each turn the fresh processes get ready, the oldest call on a process ends
        # and one more call of `steady` arrives; count the turns until every call queued now is placed.
        left = {cid for q in sim.queue.values() for cid in q}
        while left and turns < MAX_TURNS:
            turns += 1
            for u in sim.units:
                u.ready = True
            oldest = min((cid, u) for u in sim.units for cid in u.calls) if any(u.calls for u in sim.units) else None
            if oldest is not None:
                cid, u = oldest
                if u.calls.pop(cid) == "running":
                    u.load -= 1
            sim.queue.setdefault(steady, collections.deque()).append(sim.next_call)
            sim.next_call += 1
            sim.turn(len(s["ops"]) + turns)
            left -= set(sim.tenant_of)
    queued = sum(len(q) for q in sim.queue.values())
    return {"trace": sim.trace, "violation": sim.violation, "queued": queued, "turns": turns}


def main():
    for line in sys.stdin:
        if line.strip():
            try:
                out = run(json.loads(line))
            except Exception as err:  # noqa: BLE001 - the test names it
                out = {"error": repr(err)}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
