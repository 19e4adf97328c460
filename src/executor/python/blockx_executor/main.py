"""The Python Executor's entry: flags, the secret, the connection and the Hello, then the router.
Exit codes as for the JS executor (src/executor/cli-entry.ts): 0 after a normal stop, 1 on a runtime
failure, 2 on bad flags or an unreadable secret.
"""

import errno
import json
import os
import platform
import socket
import sys
import time

from blockx_executor import PROTOCOL_VERSION
from blockx_executor.args import UsageError, parse_args, read_secret_once
from blockx_executor.frames import DEFAULT_MAX_FRAME_BYTES, frame
from blockx_executor.logs import log_line
from blockx_executor.router import Router

CONNECT_TIMEOUT_S = 10.0
MAX_SOCKET_PATH_BYTES = 107
_PACKAGE_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "package.json")


def package_version():
    try:
        with open(_PACKAGE_JSON, encoding="utf-8") as fh:
            v = json.load(fh).get("version")
            return v if isinstance(v, str) else "0.0.0"
    except (OSError, ValueError):
        return "0.0.0"


def connect_with_retry(path, timeout_s):
    """The Worker may still be binding: retry ENOENT / ECONNREFUSED for up to `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    delay = 0.025
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError as err:
            s.close()
            if err.errno not in (errno.ENOENT, errno.ECONNREFUSED) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


def main(argv):
    try:
        options = parse_args(argv, os.environ)
        secret = read_secret_once(options["secret_fd"]) if options["secret_fd"] is not None else None
    except UsageError as err:
        sys.stderr.write("blockx executor: %s\n" % err)
        return 2
    path = options["socket_path"]
    if len(path.encode()) > MAX_SOCKET_PATH_BYTES:
        sys.stderr.write("blockx executor: SOCKET_PATH_TOO_LONG: %s is %d bytes, at most %d fit a Unix socket "
                         "address\n" % (path, len(path.encode()), MAX_SOCKET_PATH_BYTES))
        return 1
    try:
        conn = connect_with_retry(path, CONNECT_TIMEOUT_S)
    except OSError as err:
        sys.stderr.write("blockx executor: cannot connect to %s: %s\n" % (path, err))
        return 1
    hello = {
        "type": "Hello",
        "protocolVersion": PROTOCOL_VERSION,
        "executorVersion": package_version(),
        "pid": os.getpid(),
        "threads": options["units"],
        "functionsDir": options["functions_dir"],
        "features": ["ExecuteCalls", "Tenants"],
        "language": "python",
        "runtime": "%s %s" % (platform.python_implementation(), platform.python_version()),
    }
    if secret is not None:
        hello["secret"] = secret
    # The Hello goes out before any function code is loaded; the Worker accepts a secret once.
    conn.sendall(frame(json.dumps(hello).encode()))
    secret = hello = None
    try:
        reason = Router(conn, options, DEFAULT_MAX_FRAME_BYTES).run()
    except Exception as err:  # noqa: BLE001 - report, exit 1
        import traceback

        sys.stderr.write("blockx executor: %s\n" % "".join(traceback.format_exception(type(err), err, err.__traceback__)))
        return 1
    log_line("info", "stopped: %s" % reason)
    return 1 if reason == "execution processes cannot start" else 0
