"""How a finished attempt becomes a CallCompleted or CallFailed frame (docs/executor.md, "Failure
kinds"), as the JS executor's call-outcome.ts does it:

- the attempt was cancelled              -> kind `deadline`, retryable
- a CallWaitError (failed read/subcall)   -> its kind and retryable
- anything else                           -> kind `user`, retryable only if the exception says
                                             `retryable = True` (RetryableError)

The message is `<ExceptionType>: <text>`; the stack is the function's own frames, innermost first, one
per line, in the shape the JS executor sends (`    at inner (/srv/functions/f.py:2)`, at most 12;
docs/functions.md, "When a function throws"): the executor's, the standard library's and installed
packages' frames are left out.
"""

import json
import os
import sysconfig
import traceback

from blockx import CallWaitError

_EXECUTOR_DIR = os.path.dirname(os.path.abspath(__file__))
_SDK_DIR = os.path.join(os.path.dirname(_EXECUTOR_DIR), "blockx")
_NOT_USER = tuple(
    {_EXECUTOR_DIR + os.sep, _SDK_DIR + os.sep}
    | {os.path.join(p, "") for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")) if p}
)
USER_STACK_MAX_FRAMES = 12
USER_FRAME_MAX_CHARS = 300
MAX_TEXT = 16 * 1024
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _truncate(text):
    if len(text) <= MAX_TEXT:
        return text
    return "%s… (%d more characters)" % (text[:MAX_TEXT], len(text) - MAX_TEXT)


def describe(err):
    """`Type: text` for an exception, read without letting a hostile __str__ fail the frame."""
    name = type(err).__name__
    try:
        text = str(err)
    except BaseException:  # noqa: B036 - the function's __str__ may raise anything
        text = ""
    return "%s: %s" % (name, text) if text else name


def function_traceback(err):
    """The user's frames of `err`'s traceback, innermost first, one per line; None when there is none."""
    try:
        frames = traceback.extract_tb(err.__traceback__)
    except BaseException:  # noqa: B036
        return None
    kept = []
    for f in reversed(frames):
        name = f.filename or ""
        if not os.path.isabs(name) or name.startswith(_NOT_USER) or "site-packages" in name:
            continue
        line = "    at %s (%s:%d)" % (f.name, name, f.lineno or 0)
        kept.append(line if len(line) <= USER_FRAME_MAX_CHARS else line[: USER_FRAME_MAX_CHARS - 1] + "…")
        if len(kept) == USER_STACK_MAX_FRAMES:
            break
    return "\n".join(kept) if kept else None


def classify(err, cancel_reason):
    """(kind, retryable, message, stack, code)."""
    stack = function_traceback(err)
    if cancel_reason is not None:
        return "deadline", True, "cancelled (%s): %s" % (cancel_reason, describe(err)), stack, None
    if isinstance(err, CallWaitError):
        code = err.code if isinstance(err.code, str) else None
        kind = err.kind if err.kind in ("user", "executor_crash", "deadline", "io", "load") else "io"
        return kind, err.retryable is True, describe(err), stack, code
    try:
        retryable = getattr(err, "retryable", False) is True
        code = getattr(err, "code", None)
    except BaseException:  # noqa: B036
        retryable, code = False, None
    return "user", retryable, describe(err), stack, code if isinstance(code, str) else None


def failed_frame(call_id, attempt, kind, retryable, message, stack=None, code=None, duration_ms=None):
    m = {
        "type": "CallFailed",
        "callId": call_id,
        "attempt": attempt,
        "kind": kind,
        "retryable": retryable,
        "message": _truncate(message),
    }
    if stack is not None:
        m["stack"] = _truncate(stack)
    if code is not None:
        m["code"] = code
    if duration_ms is not None:
        m["durationMs"] = duration_ms
    return _dumps(m).encode()


def completed_frame(call_id, attempt, value, duration_ms, max_bytes):
    """CallCompleted, or CallFailed (kind user) when the value is not JSON or too large."""
    try:
        if value is None:
            text = _dumps({"type": "CallCompleted", "callId": call_id, "attempt": attempt, "durationMs": duration_ms})
        else:
            text = _dumps(
                {"type": "CallCompleted", "callId": call_id, "attempt": attempt, "value": value, "durationMs": duration_ms}
            )
    except (TypeError, ValueError, RecursionError) as err:
        return failed_frame(
            call_id,
            attempt,
            "user",
            False,
            "the return value is not JSON-serialisable: %s" % describe(err),
            duration_ms=duration_ms,
        )
    data = text.encode()
    if len(data) > max_bytes:
        return failed_frame(
            call_id,
            attempt,
            "user",
            False,
            "the return value is too large: %d bytes serialised, the frame limit is %d" % (len(data), max_bytes),
            duration_ms=duration_ms,
        )
    return data
