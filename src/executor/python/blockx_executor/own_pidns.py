"""Each execution process in a PID namespace of its own (docs/security.md, "Execution processes in PID
namespaces of their own"). The router and its execution processes run as one user in one PID namespace,
so without this a function could `os.kill` a sibling execution process (another submitter's calls on it
fail `executor_crash`). Here the router forks a short-lived helper that unshares a new PID namespace
(with a user namespace when it is not root: an unprivileged process may make a PID namespace only inside
a user namespace of its own), forks that namespace's init and exits. The init reaps whatever ends in
the namespace and forks the execution process below it; when the execution process ends, the init ends
with its status, and when the init is killed the kernel ends everything in the namespace. In the
namespace the router, the siblings and their children have no pid: a kill by number finds nothing
(ESRCH), and, in its own user namespace, the execution process holds no capability over a sibling's
(no /proc/PID/mem, no ptrace).

    router ── helper (exits) ── init: PID 1, reaps ── execution process: PID 2 ── a function's children

`BLOCKX_PYTHON_PROCESS_PIDNS=off` in the Executor's environment turns it off (docs/executor.md).
"""

import ctypes
import errno
import os
import platform
import signal
import struct
import time

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
OFF_ENV = "BLOCKX_PYTHON_PROCESS_PIDNS"
# The answers of unshare (or of writing the id maps) that say this host does not allow it, for good: the
# router then forks without namespaces, with one warning. Any other (ENOSPC: the user's namespaces at
# their limit, ENOMEM) fails that one fork only, as a failed fork would; otherwise a function that used
# up a resource could switch the namespaces off for the processes forked after.
REFUSED = (errno.EPERM, errno.EACCES, errno.EINVAL, errno.ENOSYS, errno.EUSERS)

_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def flags_for(euid, env):
    """The unshare flags for a router of effective uid `euid` (0: turned off by `env`). Root needs no user
    namespace, and keeps its privileges (an Executor run as root on purpose is trusted with them)."""
    if (env.get(OFF_ENV) or "").strip().lower() in ("off", "0", "false", "no"):
        return 0
    return CLONE_NEWPID if euid == 0 else CLONE_NEWUSER | CLONE_NEWPID


def exit_code_of(status):
    """What the init exits with when its execution process ended with wait `status`: the process's exit
    code, or 128 + the signal that ended it (an init cannot end by a signal it sends itself)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 1


def ended_by_signal(status, nested):
    """The signal that ended an execution process whose (init's, when `nested`) wait status is `status`,
    or None when it exited. A nested process's exit code 128 + n reads as signal n (exit_code_of)."""
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status)
    if nested and os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) < 128 + 65:
        return os.WEXITSTATUS(status) - 128
    return None


def set_dumpable(on):
    """PR_SET_DUMPABLE. Not dumpable, a process's /proc/PID/mem (and ptrace) is shut to processes of its
    user that hold no CAP_SYS_PTRACE: the router is so, from the start, so that no function can write its
    memory (docs/security.md); an execution process is made dumpable again (its own /proc files stay
    its own: /proc/self/environ)."""
    try:
        return _c().prctl(PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper():
    """Processes orphaned below the router (an init whose helper exited) become its children, so it can
    wait for them even when it is not PID 1. False where the kernel refuses."""
    try:
        return _c().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _unshare(flags, uid, gid):
    """Make the namespaces (the next fork is the new PID namespace's init); None, or (errno, why)."""
    libc = _c()
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        return err, "unshare(%s) failed: %s" % (
            "CLONE_NEWUSER|CLONE_NEWPID" if flags & CLONE_NEWUSER else "CLONE_NEWPID", os.strerror(err))
    if flags & CLONE_NEWUSER:
        # The same uid and gid inside as outside (getuid() answers as before); setgroups must be denied
        # before an unprivileged process may write its gid_map.
        for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", "%d %d 1" % (uid, uid)),
                           ("/proc/self/gid_map", "%d %d 1" % (gid, gid))):
            try:
                with open(path, "w") as fh:
                    fh.write(text)
            except OSError as err:
                return err.errno, "writing %s failed: %s" % (path, err.strerror)
    return None


def _drop_capabilities():
    """The capabilities a new user namespace gave: none are needed, none kept (capset, all sets empty)."""
    nr = _SYS_CAPSET.get(platform.machine())
    if nr is None:
        return
    header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two __user_cap_data_struct {effective, permitted, inheritable}, all zero
    _c().syscall(nr, ctypes.c_char_p(header), ctypes.c_char_p(data))  # unchecked: they are its own ns's


def _parent_in_proc():
    """This process's parent as /proc (the router's namespace) names it, or None where it cannot be read.
    In a new PID namespace getppid() answers 0 for any parent outside it, so it cannot tell them apart."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _wait_for_router(helper, router):
    """The init, once the helper's pipe closed: wait until its parent is no longer the helper (the pipe
    closes before the kernel hands the helper's children on: a parent-death signal set in between fires
    when the helper's exit completes), then set the parent-death signal; False if its parent then is
    not `router` (the router died meanwhile: nothing is left to serve)."""
    deadline = time.monotonic() + 5.0
    while _parent_in_proc() == helper and time.monotonic() < deadline:
        time.sleep(0.0002)
    _c().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    parent = _parent_in_proc()
    return parent is None or parent == router


def enter(flags, report_w, init_closes, router):
    """Called in the router's fresh child (the helper). Makes the namespaces, forks the init, writes
    b"+<init pid>" (or b"!<errno> <why>", read_report) to `report_w` and exits. Returns only in the
    execution process, PID 2 of the new namespace; the init closes `init_closes` (the execution process's
    end of its socket). `router`: the router's pid."""
    # Dumpable, as the router is not: a process that is not may not write its own /proc/self/uid_map.
    set_dumpable(True)
    problem = _unshare(flags, os.geteuid(), os.getegid())
    if problem is not None:
        os.write(report_w, b"!%d %s" % (problem[0], problem[1].encode()))
        os._exit(0)
    gone_r, gone_w = os.pipe()
    helper = os.getpid()
    init = os.fork()
    if init:
        os.write(report_w, b"+%d" % init)
        os._exit(0)
    # The init, PID 1. It waits for the helper to exit (the pipe's end, then its parent), after which its
    # parent is the router: the parent-death signal set then fires when the router dies (set before, the
    # helper's exit would fire it).
    os.close(report_w)
    os.close(gone_w)
    while os.read(gone_r, 1):
        pass
    os.close(gone_r)
    if not _wait_for_router(helper, router):
        os._exit(0)
    # A process group of its own: a kill of "my process group" from inside reaches this namespace only
    # (not a session: with sched_autogroup a session is a CPU share of its own, which would change how the
    # scheduler weighs execution processes against the Worker). Not dumpable: a function's child cannot
    # write its memory (/proc/1/mem) without a capability here.
    os.setpgid(0, 0)
    set_dumpable(False)
    work = os.fork()
    if work == 0:
        if flags & CLONE_NEWUSER:
            _drop_capabilities()
        return
    for fd in init_closes:
        try:
            os.close(fd)
        except OSError:
            pass
    _serve_as_init(work)


def _serve_as_init(work):
    """PID 1 of the namespace: wait for everything that ends in it (a function's children's orphans come
    here); when the execution process ends, end with its status (which ends the namespace)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == work:
            os._exit(exit_code_of(status))


def read_report(report):
    """The helper's report: ("pid", init pid), ("refused", why) when this host does not allow the
    namespaces (REFUSED), or ("failed", errno, why) for a failure of this one fork (the helper died
    before it reported: a fork that failed, or a resource at its limit)."""
    if report.startswith(b"+") and report[1:].isdigit():
        return ("pid", int(report[1:]))
    if report.startswith(b"!"):
        code, _, why = report[1:].partition(b" ")
        code = int(code) if code.isdigit() else errno.EIO
        why = why.decode(errors="replace")
        return ("refused", why) if code in REFUSED else ("failed", code, why)
    return ("failed", errno.EAGAIN, "the helper that makes it ended before it reported")


def outer_pid():
    """This process's pid as /proc (the router's namespace) names it, or None."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return None
