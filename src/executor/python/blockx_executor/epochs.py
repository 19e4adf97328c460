"""Code epochs on the executor side (docs/executor.md, "Functions and code epochs").

The Worker's code view sends the sources of an epoch with DefineEpoch; this store keeps them (only the
file list and the `.py` sources matter here) until RetireEpoch. Without a DefineEpoch the executor serves
an epoch only if it is what its own functions directory holds now: the id is the Worker's content hash,
SHA-256 over every function file's (name, source), sorted by file name, first 16 hex digits.

Which file is function `name` follows the resolver of src/executor/core/function-resolution.ts: exactly
one top-level `<name>.<ext>`; two files for a name is an error. This executor runs `.py` files only.
"""

import hashlib
import os
import re
import time

FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# Every language's extension takes part in the epoch id (the Worker hashes all function files).
FUNCTION_EXTENSIONS = (".ts", ".mjs", ".js", ".py")
LOCAL_TTL_S = 0.1

EPOCH_UNKNOWN = "EPOCH_UNKNOWN"
FUNCTION_NOT_FOUND = "FUNCTION_NOT_FOUND"
FUNCTION_LOAD_FAILED = "FUNCTION_LOAD_FAILED"


def parse_function_file_name(file_name):
    """(name, ext) or None, as the Worker's code view decides (names are identifiers; a `.py` name may
    not start with `__`, so `__init__.py` is not a function)."""
    for ext in FUNCTION_EXTENSIONS:
        if file_name.endswith(ext):
            name = file_name[: -len(ext)]
            if not FUNCTION_NAME.match(name) or (ext == ".py" and name.startswith("__")):
                return None
            return name, ext
    return None


def compute_epoch_id(files):
    """files: iterable of (file_name, source)."""
    h = hashlib.sha256()
    for file_name, source in sorted(files):
        h.update(file_name.encode())
        h.update(b"\0")
        h.update(source.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


class Epoch:
    __slots__ = ("id", "functions_dir", "names", "python", "_resolved")

    def __init__(self, epoch_id, functions_dir, files):
        self.id = epoch_id
        self.functions_dir = functions_dir
        # name -> [file names]
        self.names = {}
        # file name -> source, `.py` files only
        self.python = {}
        self._resolved = {}
        for f in files:
            self.names.setdefault(f["name"], []).append(f["fileName"])
            if f["fileName"].endswith(".py"):
                self.python[f["fileName"]] = f["source"]

    def resolve(self, name):
        """(file_name, None) or (None, (code, message))."""
        hit = self._resolved.get(name)
        if hit is None:
            hit = self._resolve(name)
            if name in self.names:  # cache only names the epoch has: the cache stays bounded
                self._resolved[name] = hit
        return hit

    def _resolve(self, name):
        candidates = self.names.get(name)
        where = "%s (code epoch %s)" % (self.functions_dir, self.id)
        if not candidates:
            known = ", ".join(sorted(self.names)) or "none"
            return None, (
                FUNCTION_NOT_FOUND,
                'function "%s" not found in %s; expected %s.py; available: %s' % (name, where, name, known),
            )
        if len(candidates) > 1:
            return None, (
                FUNCTION_LOAD_FAILED,
                'function "%s" is defined by more than one file in %s: %s; keep one'
                % (name, where, ", ".join(sorted(candidates))),
            )
        file_name = candidates[0]
        if not file_name.endswith(".py"):
            return None, (
                FUNCTION_NOT_FOUND,
                'function "%s" is %s in %s, not a Python function; the Python executor runs .py files only'
                % (name, file_name, where),
            )
        return file_name, None


class EpochStore:
    def __init__(self, functions_dir):
        self.functions_dir = functions_dir
        self.defined = {}
        self._local = None
        self._local_sig = None
        self._local_at = -1.0
        self._sources = {}

    def define(self, message):
        files = message.get("files")
        epoch_id = message.get("epoch")
        if not isinstance(epoch_id, str) or not isinstance(files, list):
            raise ValueError("DefineEpoch needs a string epoch and a files array")
        clean = []
        for f in files:
            if not (
                isinstance(f, dict)
                and isinstance(f.get("name"), str)
                and isinstance(f.get("fileName"), str)
                and isinstance(f.get("source"), str)
            ):
                raise ValueError("DefineEpoch files need string name, fileName and source")
            clean.append(f)
        functions_dir = message.get("functionsDir")
        self.defined[epoch_id] = Epoch(
            epoch_id, functions_dir if isinstance(functions_dir, str) else self.functions_dir, clean
        )

    def retire(self, epoch_id):
        self.defined.pop(epoch_id, None)

    def count(self):
        return len(self.defined) + (1 if self._local is not None and self._local.id not in self.defined else 0)

    def get(self, epoch_id):
        """(Epoch, None) or (None, message)."""
        e = self.defined.get(epoch_id)
        if e is not None:
            return e, None
        try:
            local = self._current_local(LOCAL_TTL_S)
            if local.id != epoch_id:
                local = self._current_local(0)
        except OSError as err:
            return None, "cannot read the functions directory %s: %s" % (self.functions_dir, err)
        if local.id == epoch_id:
            return local, None
        return None, (
            "code epoch %s is not available: the worker did not define it and %s now holds epoch %s"
            % (epoch_id, self.functions_dir, local.id)
        )

    def _current_local(self, max_age_s):
        now = time.monotonic()
        if self._local is not None and now - self._local_at < max_age_s:
            return self._local
        listing = []
        for file_name in sorted(os.listdir(self.functions_dir)):
            parsed = parse_function_file_name(file_name)
            if parsed is None:
                continue
            path = os.path.join(self.functions_dir, file_name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if not os.path.isfile(path):
                continue
            listing.append((file_name, parsed[0], path, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)))
        sig = tuple((f[0], f[3]) for f in listing)
        if sig != self._local_sig or self._local is None:
            files = []
            for file_name, name, path, key in listing:
                cached = self._sources.get(file_name)
                if cached is None or cached[0] != key:
                    try:
                        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                            cached = (key, fh.read())
                    except OSError:
                        continue
                    self._sources[file_name] = cached
                files.append({"name": name, "fileName": file_name, "source": cached[1]})
            epoch_id = compute_epoch_id((f["fileName"], f["source"]) for f in files)
            self._local = Epoch(epoch_id, self.functions_dir, files)
            self._local_sig = sig
        self._local_at = now
        return self._local
