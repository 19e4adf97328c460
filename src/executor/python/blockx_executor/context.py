"""The `ctx` a Python function receives: the TS SDK's CallContext in Python spelling (docs/functions.md,
"Python functions"). Reads and subcalls become CallWaiting frames, answered by the Worker's ResumeCall;
they are the same requests the JS executor sends, so the Worker's task read cache serves both.
"""

from blockx import CallCancelled

LEVELS = {"debug": 20, "info": 30, "warn": 40, "error": 50}


class CallLog:
    """`ctx.log.debug|info|warn|error(message, fields=None, **more)`; `warning` is an alias of `warn`."""

    __slots__ = ("_run", "_host")

    def __init__(self, run, host):
        self._run = run
        self._host = host

    def _emit(self, level, message, fields, more):
        data = dict(fields) if fields else {}
        if more:
            data.update(more)
        self._host.log(self._run, level, str(message), data)

    def debug(self, message, fields=None, **more):
        self._emit("debug", message, fields, more)

    def info(self, message, fields=None, **more):
        self._emit("info", message, fields, more)

    def warn(self, message, fields=None, **more):
        self._emit("warn", message, fields, more)

    warning = warn

    def error(self, message, fields=None, **more):
        self._emit("error", message, fields, more)


class Scan:
    """What `ctx.io.scan` returns: await it for the list of rows, or `async for` over them. The request
    is sent once, when first awaited or iterated (at most 10,000 rows in one answer; pass a `limit`)."""

    __slots__ = ("_fetch", "_future")

    def __init__(self, fetch):
        self._fetch = fetch
        self._future = None

    def _rows(self):
        if self._future is None:
            self._future = self._fetch()
        return self._future

    def __await__(self):
        return self._rows().__await__()

    async def to_list(self):
        return list(await self._rows())

    def __aiter__(self):
        return self._iterate()

    async def _iterate(self):
        for row in await self._rows():
            yield row


class CallIo:
    """Reads through the Worker's task IO scope; a missing row is None; a failed read raises
    CallWaitError."""

    __slots__ = ("_run", "_host")

    def __init__(self, run, host):
        self._run = run
        self._host = host

    def get(self, table, key):
        return self._host.wait(self._run, {"kind": "io", "op": "get", "table": table, "key": key})

    def get_many(self, table, keys):
        return self._host.wait(
            self._run, {"kind": "io", "op": "getMany", "table": table, "keys": list(keys)}
        )

    def scan(self, table, options=None, **more):
        opts = dict(options) if options else {}
        if more:
            opts.update(more)
        run, host = self._run, self._host
        return Scan(lambda: host.wait(run, {"kind": "io", "op": "scan", "table": table, "options": opts}))


class CallContext:
    __slots__ = ("_run", "_host", "_io", "_log")

    def __init__(self, run, host):
        self._run = run
        self._host = host
        self._io = None
        self._log = None

    @property
    def task_id(self):
        return self._run.call["taskId"]

    @property
    def call_id(self):
        return self._run.call["callId"]

    @property
    def attempt(self):
        return self._run.call["attempt"]

    @property
    def block(self):
        """The block the builder attached to this call (a dict), or None."""
        return self._run.call.get("block")

    @property
    def function(self):
        return self._run.call["function"]

    @property
    def cancelled(self):
        """True once the Worker cancelled the attempt (deadline, task timeout, fast fail). Sync code in a
        loop should check it; an `await` in a cancelled async function raises asyncio.CancelledError."""
        return self._host.is_cancelled(self._run)

    @property
    def cancel_reason(self):
        return self._run.cancel_reason if self.cancelled else None

    def raise_if_cancelled(self):
        if self.cancelled:
            raise CallCancelled("call cancelled: %s" % (self._run.cancel_reason or "cancelled by the worker"))

    @property
    def io(self):
        if self._io is None:
            self._io = CallIo(self._run, self._host)
        return self._io

    @property
    def log(self):
        if self._log is None:
            self._log = CallLog(self._run, self._host)
        return self._log

    def call(self, name, *args):
        """Call another function (any language) as a subcall scheduled by the Worker's dispatcher."""
        return self._host.wait(self._run, {"kind": "subcall", "function": name, "args": list(args)})
