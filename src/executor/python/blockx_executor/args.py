"""The executor's flags: the ones the supervisor gives a JS executor (src/executor/cli-entry.ts), so one
supervisor spawns either. `--threads` is the number of execution processes here; `--thread-heap-mb` is
accepted and has no effect (CPython has no separate heap limit; `--thread-memory-mb` bounds a process's
RSS instead). Bad flags exit 2.
"""

import argparse
import os

DEFAULT_HEARTBEAT_INTERVAL_MS = 250
DEFAULT_CANCEL_HARD_LIMIT_MS = 1000
DEFAULT_MAX_CALLS_PER_THREAD = 256
DEFAULT_THREAD_MEMORY_MB = 1536
DEFAULT_MAX_RSS_MB = 4096
MAX_SECRET_BYTES = 1024


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _positive(flag):
    def parse(text):
        try:
            n = int(text, 10)
        except ValueError:
            n = 0
        if n <= 0:
            raise argparse.ArgumentTypeError("--%s must be a positive integer, got %r" % (flag, text))
        return n

    return parse


def _whole(flag):
    def parse(text):
        if not text.isdigit():
            raise argparse.ArgumentTypeError("--%s must be a whole number >= 0, got %r" % (flag, text))
        return int(text, 10)

    return parse


def default_units():
    """Execution processes: the available CPUs, at least 2 (one hot loop must not block all), at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 2
    return max(2, min(8, cpus))


def parse_args(argv, env):
    p = _Parser(prog="blockx executor (python)", add_help=False, allow_abbrev=False)
    p.add_argument("--socket", required=True)
    p.add_argument("--functions-dir")
    p.add_argument("--threads", type=_positive("threads"))
    p.add_argument("--heartbeat-interval-ms", type=_positive("heartbeat-interval-ms"))
    p.add_argument("--cancel-hard-limit-ms", type=_positive("cancel-hard-limit-ms"))
    p.add_argument("--max-calls-per-thread", type=_positive("max-calls-per-thread"))
    p.add_argument("--read-copy-max-entries", type=_whole("read-copy-max-entries"))
    p.add_argument("--isolation", choices=("task", "none"))
    p.add_argument("--thread-heap-mb", type=_positive("thread-heap-mb"))
    p.add_argument("--thread-memory-mb", type=_whole("thread-memory-mb"))
    p.add_argument("--max-rss-mb", type=_whole("max-rss-mb"))
    p.add_argument("--secret-fd", type=_whole("secret-fd"))
    ns = p.parse_args(list(argv))
    if not ns.socket:
        raise UsageError("--socket PATH is required")
    functions_dir = os.path.abspath(ns.functions_dir or env.get("BLOCKX_FUNCTIONS_DIR") or "functions")
    return {
        "socket_path": ns.socket,
        "functions_dir": functions_dir,
        "units": ns.threads or default_units(),
        "heartbeat_interval_ms": ns.heartbeat_interval_ms or DEFAULT_HEARTBEAT_INTERVAL_MS,
        "cancel_hard_limit_ms": ns.cancel_hard_limit_ms or DEFAULT_CANCEL_HARD_LIMIT_MS,
        "max_calls_per_unit": ns.max_calls_per_thread or DEFAULT_MAX_CALLS_PER_THREAD,
        "isolation": ns.isolation or "task",
        "unit_memory_mb": DEFAULT_THREAD_MEMORY_MB if ns.thread_memory_mb is None else ns.thread_memory_mb,
        "max_rss_mb": DEFAULT_MAX_RSS_MB if ns.max_rss_mb is None else ns.max_rss_mb,
        "secret_fd": ns.secret_fd,
        "log_level": env.get("BLOCKX_LOG_LEVEL") or "info",
    }


def read_secret_once(fd):
    """Read the spawn secret from `fd` to its end, close the fd, return it (docs/security.md)."""
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks.append(chunk)
            if sum(len(c) for c in chunks) > MAX_SECRET_BYTES + 2:
                break
    except OSError as err:
        raise UsageError("--secret-fd %d: %s" % (fd, err.strerror)) from None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    secret = b"".join(chunks).decode("utf-8", "replace").strip()
    if not secret:
        raise UsageError("--secret-fd %d: no secret to read" % fd)
    if len(secret.encode()) > MAX_SECRET_BYTES or any(c.isspace() for c in secret):
        raise UsageError(
            "--secret-fd %d: not a secret (one word of at most %d bytes)" % (fd, MAX_SECRET_BYTES)
        )
    return secret
