"""Entry point of the Python Executor: `python3 -B blockx-executor.py --socket PATH --secret-fd 3 ...`.

Its folder is sys.path[0], so the executor package (blockx_executor) and the function SDK (blockx) import
from here. See docs/executor.md, "The Python Executor".
"""

import sys

if sys.version_info < (3, 9):
    sys.stderr.write("blockx executor: Python 3.9 or newer is required, this is %s\n" % sys.version.split()[0])
    sys.exit(2)

from blockx_executor.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
