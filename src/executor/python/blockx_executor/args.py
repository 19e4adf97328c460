"""The executor's flags: the ones the supervisor gives a JS executor (src/executor/executor-settings.ts),
so one supervisor spawns either. `--threads` is the number of execution processes here; `--thread-heap-mb`
is accepted and has no effect (CPython has no separate heap limit; `--thread-memory-mb` bounds a process's
RSS instead). Every setting comes from the config table through the Worker, which passes each one: this
executor has no defaults of its own, and a missing flag is a usage error (exit 2), as is a bad one.
"""

import argparse
import os

from blockx_executor.own_pidns import flags_for

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


def parse_args(argv, env):
    p = _Parser(prog="blockx executor (python)", add_help=False, allow_abbrev=False)
    p.add_argument("--socket", required=True)
    p.add_argument("--functions-dir", required=True)
    p.add_argument("--threads", type=_positive("threads"), required=True)
    p.add_argument("--heartbeat-interval-ms", type=_positive("heartbeat-interval-ms"), required=True)
    p.add_argument("--cancel-hard-limit-ms", type=_positive("cancel-hard-limit-ms"), required=True)
    p.add_argument("--max-calls-per-thread", type=_positive("max-calls-per-thread"), required=True)
    p.add_argument("--read-copy-max-entries", type=_whole("read-copy-max-entries"), required=True)
    p.add_argument("--isolation", choices=("task", "none"), required=True)
    p.add_argument("--thread-heap-mb", type=_positive("thread-heap-mb"), required=True)
    p.add_argument("--thread-memory-mb", type=_whole("thread-memory-mb"), required=True)
    p.add_argument("--max-rss-mb", type=_whole("max-rss-mb"), required=True)
    p.add_argument("--secret-fd", type=_whole("secret-fd"))
    ns = p.parse_args(list(argv))
    if not ns.socket:
        raise UsageError("--socket PATH is required")
    if not ns.functions_dir:
        raise UsageError("--functions-dir DIR is required")
    return {
        "socket_path": ns.socket,
        "functions_dir": os.path.abspath(ns.functions_dir),
        "units": ns.threads,
        "heartbeat_interval_ms": ns.heartbeat_interval_ms,
        "cancel_hard_limit_ms": ns.cancel_hard_limit_ms,
        "max_calls_per_unit": ns.max_calls_per_thread,
        "isolation": ns.isolation,
        "unit_memory_mb": ns.thread_memory_mb,
        "max_rss_mb": ns.max_rss_mb,
        "secret_fd": ns.secret_fd,
        "log_level": env.get("BLOCKX_LOG_LEVEL") or "info",
        # Each execution process in a PID namespace of its own (own_pidns.py): the unshare flags, 0 off.
        "nest": flags_for(os.geteuid(), env),
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
