"""An execution process may not signal its router (docs/security.md, "Executors as their own user"). The
router and the processes it forks run as one user, so the kernel lets a function `os.kill` the router
(a SIGSTOP took a Worker's Python executor down in the issue's probe). Before any function code runs, the
process installs a seccomp filter (Linux, x86-64 and arm64) that answers EPERM to kill, tkill and tgkill
aimed at the router, its process group, the process's own group (0) or every process (-1), and to
pidfd_send_signal, ptrace and process_vm_writev altogether; signals to anything else (a function's own
child processes) pass. Where the filter cannot be installed (another kernel or architecture) the
process runs without it: `forbid_signals_to_router` returns False.
"""

import ctypes
import platform
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_EPERM = 0x00050000 | 1

# The syscall numbers per architecture (AUDIT_ARCH value, then kill, tkill, tgkill, pidfd_send_signal,
# ptrace, process_vm_writev).
_ARCHES = {
    "x86_64": (0xC000003E, 62, 200, 234, 424, 101, 311),
    "aarch64": (0xC00000B7, 129, 130, 131, 424, 117, 271),
}

# Classic BPF opcodes, and where the fields of struct seccomp_data sit.
_LD_ABS_W = 0x20
_JEQ_K = 0x15
_RET_K = 0x06
_NR, _ARCH, _ARG0_LOW = 0, 4, 16


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def program(arch, router_pid, router_pgid):
    """The filter as (code, jt, jf, k) tuples; `arch` a key of _ARCHES. `router_pid` and `router_pgid` are
    None where the router has no pid in the caller's PID namespace (own_pidns.py): 0 and -1 stay refused."""
    audit, kill, tkill, tgkill, pidfd, ptrace, vm_write = _ARCHES[arch]
    targets = {0, 0xFFFFFFFF}
    if router_pid is not None:
        targets.add(router_pid)
    if router_pgid is not None:
        targets.add((-router_pgid) & 0xFFFFFFFF)
    targets = sorted(targets)
    # Layout: arch check, syscall dispatch, the target checks of the kill family, then DENY, ALLOW.
    head = [(_LD_ABS_W, 0, 0, _ARCH), ("jne_allow", audit), (_LD_ABS_W, 0, 0, _NR)]
    dispatch = [("jeq_check", kill), ("jeq_check", tkill), ("jeq_check", tgkill),
                ("jeq_deny", pidfd), ("jeq_deny", ptrace), ("jeq_deny", vm_write), ("allow",)]
    check = [(_LD_ABS_W, 0, 0, _ARG0_LOW)] + [("jeq_deny", t) for t in targets] + [("allow",)]
    body = head + dispatch + check
    deny_at, allow_at = len(body), len(body) + 1
    check_at = len(head) + len(dispatch)
    out = []
    for i, ins in enumerate(body):
        to = lambda target: target - i - 1
        if ins[0] == "jne_allow":
            out.append((_JEQ_K, 0, to(allow_at), ins[1]))
        elif ins[0] == "jeq_check":
            out.append((_JEQ_K, to(check_at), 0, ins[1]))
        elif ins[0] == "jeq_deny":
            out.append((_JEQ_K, to(deny_at), 0, ins[1]))
        elif ins[0] == "allow":
            out.append((_JEQ_K, to(allow_at), to(allow_at), 0))
        else:
            out.append(ins)
    out.append((_RET_K, 0, 0, SECCOMP_RET_EPERM))
    out.append((_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return out


def forbid_signals_to_router(router_pid, router_pgid):
    """Install the filter in this process (it holds for what it forks and execs too); False if it cannot."""
    arch = platform.machine()
    if arch not in _ARCHES or struct.calcsize("P") != 8:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        code = program(arch, router_pid, router_pgid)
        filters = (_Filter * len(code))(*[_Filter(*ins) for ins in code])
        prog = _Program(len(code), filters)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0
    except (OSError, AttributeError, ValueError):
        return False

