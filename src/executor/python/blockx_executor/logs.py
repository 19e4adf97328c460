"""The executor's own log lines: JSON, one per line, on stderr (the supervisor reads them)."""

import json
import os
import time

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def log_line(level, msg, **fields):
    line = _dumps({"level": level, "time": int(time.time() * 1000), "component": "executor", "language": "python",
                   **fields, "msg": msg})
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass
