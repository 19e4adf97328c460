"""The BlockX function SDK for Python (docs/functions.md, "Python functions").

A function is `functions/<name>.py` with a module-level `main(ctx, *args)`, plain `def` or `async def`:

    from blockx import RetryableError

    async def main(ctx, name):
        row = await ctx.io.get("balances", {"address": name})
        if row is None:
            raise RetryableError("not indexed yet")
        return {"name": name, "balance": row["balance"]}

`ctx` carries `task_id`, `call_id`, `attempt`, `block`, `log`, `io` (`get`, `get_many`, `scan`), `call`
(a subcall through the Worker's dispatcher) and `cancelled` (see the executor's CallContext). Reads and
subcalls are awaitables, so they need an `async def` function. The return value must be
JSON-serialisable; None travels as null.
"""

__all__ = ["RetryableError", "CallWaitError", "CallCancelled"]


class RetryableError(Exception):
    """Raise this (or any exception with `retryable = True`) to ask the Worker to retry the attempt."""

    retryable = True


class CallWaitError(Exception):
    """Raised by `await ctx.io.*` and `await ctx.call(...)` when the Worker could not serve the request.

    `kind` is `io` for a failed read, the child's failure kind for a failed subcall; if the exception
    escapes the function, the call fails with that kind and `retryable`.
    """

    def __init__(self, message, kind="io", retryable=False, code=None):
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.code = code


class CallCancelled(Exception):
    """Raised by `ctx.raise_if_cancelled()` once the Worker cancelled the attempt."""
