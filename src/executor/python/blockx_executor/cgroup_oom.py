"""Whether the kernel ended an execution process at the executor's memory ceiling (docs/security.md, "A
memory ceiling per Executor"). The Worker puts each executor in a cgroup of its own with a memory limit
(executor.memoryMaxMb); past it the kernel kills the largest process in it, here the execution process
that allocates, with SIGKILL. The cgroup counts those kills (`oom_kill N` in v2 memory.events, v1
memory.oom_control), so a process that died of a SIGKILL the router did not send, while the count rose,
was ended for memory. Without such a cgroup the count stays 0.
"""

import os


def _unescape(path):
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    out, i = [], 0
    while i < len(path):
        if path[i] == "\\" and path[i + 1 : i + 4].isdigit():
            out.append(chr(int(path[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(path[i])
            i += 1
    return "".join(out)


def _below(mount_point, root, path):
    root = root.rstrip("/")
    if root and path != root and not path.startswith(root + "/"):
        return None
    rest = path[len(root):].lstrip("/")
    return os.path.join(mount_point, rest) if rest else mount_point


def events_file(proc_cgroup, mountinfo):
    """The file that counts this process's cgroup's OOM kills: v2 first, then v1's memory tree; or None."""
    own_v2, own_v1 = None, None
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            own_v2 = parts[2]
        elif "memory" in parts[1].split(","):
            own_v1 = parts[2]
    found = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(" "), right.split(" ")
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, mount_point = _unescape(fields[3]), _unescape(fields[4])
        if tail[0] == "cgroup2" and own_v2 is not None:
            d = _below(mount_point, root, own_v2)
            if d is not None:
                found.append((0, os.path.join(d, "memory.events")))
        elif tail[0] == "cgroup" and own_v1 is not None and "memory" in tail[2].split(","):
            d = _below(mount_point, root, own_v1)
            if d is not None:
                found.append((1, os.path.join(d, "memory.oom_control")))
    for _, path in sorted(found):
        if os.path.exists(path):
            return path
    return None


def oom_kills_of(text):
    for line in text.splitlines():
        if line.startswith("oom_kill "):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return 0
    return 0


class OomCount:
    """The OOM kills of the executor's cgroup since the last look (found once, at the router's start)."""

    def __init__(self):
        try:
            with open("/proc/self/cgroup") as a, open("/proc/self/mountinfo") as b:
                self.path = events_file(a.read(), b.read())
        except OSError:
            self.path = None
        self.seen = self._read()

    def _read(self):
        if self.path is None:
            return 0
        try:
            with open(self.path) as fh:
                return oom_kills_of(fh.read())
        except OSError:
            return 0

    def new_kills(self):
        n = self._read()
        new, self.seen = n - self.seen, n
        return new

    def limit_text(self):
        """The cgroup's memory limit as "N MiB", or "" where it cannot be read."""
        if self.path is None:
            return ""
        name = "memory.max" if self.path.endswith("memory.events") else "memory.limit_in_bytes"
        try:
            with open(os.path.join(os.path.dirname(self.path), name)) as fh:
                return "%d MiB" % (int(fh.read().strip()) // (1024 * 1024))
        except (OSError, ValueError):
            return ""
