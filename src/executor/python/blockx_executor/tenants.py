"""Tenants on execution processes (docs/executor.md, "Tenants on threads"; issue 32, item 5): calls of
different tenants (an opaque key per submitter identity, ExecuteCalls.tenant) never run on one execution
process at the same time, and with `--isolation task` a process never runs a second tenant at all: a
process that served one tenant is replaced by a fresh fork before it takes another's call. No IO, no
clock: the router (router.py) calls `place_tenant_calls` once per turn and carries out what it returns.

Theory of operation (the rule of src/executor/core/tenant-placement.ts, per process). A process's tenant
is the tenant of the calls on it (running, waiting on the Worker, or sent and not started); with `sticky`
(isolation task) it is the tenant of the first call it ever took, for its whole life. A process with no
tenant takes any. Each tenant's queued calls are read in order, tenants by their oldest queued call; each
call goes to the routable process with the fewest running calls among those of its own tenant or of
none, as routing without tenants would choose. A tenant that finds none and holds no process reserves
one (`reserved_for`): the process with the fewest calls (a fresh one first among equals) that is not
reserved already. A reserved process takes no new call of any other tenant, so it drains; once empty it
takes the reserving tenant's calls (clearing the reservation), or, with `sticky`, is first renewed
(`renew`: the router kills it and forks a fresh one that keeps the reservation). A tenant with a steady
stream of calls so keeps another off a process only for as long as the calls already on it take. A
reservation whose tenant has nothing queued is dropped.
"""

# The key of calls that carry no tenant (a Worker that sends none): one tenant among the others.
NO_TENANT = ""
# ExecuteCall(s).tenant: an opaque string of 1 to 128 characters when present (executor-main.ts).
MAX_TENANT_CHARS = 128


def tenant_problem(value):
    """What is wrong with an ExecuteCall's `tenant` field, or None (absent is fine)."""
    if value is None:
        return None
    if type(value) is not str or value == "" or len(value) > MAX_TENANT_CHARS:
        return "tenant must be a string of 1 to %d characters when present" % MAX_TENANT_CHARS
    return None


def owner_of(unit, sticky):
    """The tenant `unit` belongs to now, or None while it takes any."""
    if sticky or unit.calls:
        return unit.tenant
    return None


def place_tenant_calls(units, queued, max_calls, routable, sticky):
    """Place queued calls on `units` under the rule above.

    `queued`: (tenant, count) per tenant with queued calls, the tenant of the oldest queued call first. `routable(unit)`: whether the
    unit may take a new call now (ready, beating, not cancelling). A unit exposes `load` (running calls),
    `calls` (all its calls), `tenant`, `reserved_for` (read and set here) and `dead`.
    Returns (placements, renew): `placements` a list of (tenant, unit), in order, each taking the next
    queued call of that tenant; `renew` the empty units to replace by a fresh process before they take
    the tenant reserving them.
    """
    open_units = []
    running = []
    owner = []
    room = 0
    for u in units:
        if u.dead or u.load >= max_calls or not routable(u):
            continue
        open_units.append(u)
        running.append(u.load)
        owner.append(owner_of(u, sticky))
        room += 1
    placements = []
    # This scan's placements, not on the units yet: (tenant, count) by unit, for reservations and renewals.
    placed = {}

    def owner_now(u):
        p = placed.get(id(u))
        return p[0] if p is not None else owner_of(u, sticky)

    def calls_now(u):
        p = placed.get(id(u))
        return len(u.calls) + (p[1] if p is not None else 0)

    waiting = set()
    read_all = True
    for tenant, count in queued:
        if room == 0:
            read_all = False
            break
        waiting.add(tenant)
        for _ in range(count):
            best = -1
            for j, u in enumerate(open_units):
                if running[j] >= max_calls:
                    continue
                if owner[j] is not None and owner[j] != tenant:
                    continue
                if u.reserved_for is not None and u.reserved_for != tenant:
                    continue
                if best < 0 or running[j] < running[best]:
                    best = j
            if best < 0:
                _reserve_for(units, tenant, owner_now, calls_now)
                break
            u = open_units[best]
            placements.append((tenant, u))
            placed[id(u)] = (tenant, calls_now(u) - len(u.calls) + 1)
            owner[best] = tenant
            if u.reserved_for == tenant:
                u.reserved_for = None
            running[best] += 1
            if running[best] == max_calls:
                room -= 1
                if room == 0:
                    break
    if read_all:
        for u in units:
            if u.reserved_for is not None and u.reserved_for not in waiting:
                u.reserved_for = None
    renew = []
    if sticky:
        for u in units:
            if (not u.dead and calls_now(u) == 0 and u.reserved_for is not None and u.tenant is not None
                    and u.tenant != u.reserved_for):
                renew.append(u)
    return placements, renew


def _reserve_for(units, tenant, owner_now, calls_now):
    """`tenant` found no process: unless it holds one (its own or reserved), reserve the least busy free one
    (counting this scan's placements), one that never served anyone first among equals."""
    best = None
    best_key = None
    for u in units:
        if u.dead:
            continue
        if u.reserved_for == tenant or owner_now(u) == tenant:
            return
        if u.reserved_for is not None:
            continue
        key = (calls_now(u), owner_now(u) is not None)
        if best is None or key < best_key:
            best, best_key = u, key
    if best is not None:
        best.reserved_for = tenant
