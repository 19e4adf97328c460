"""The BlockX Python Executor (docs/executor.md, "The Python Executor").

Standard library only. `blockx-executor.py` next to this package is the entry point; the Worker starts it
with the command from src/executor/python-command.ts and the same flags a JS executor gets.
"""

PROTOCOL_VERSION = 1
