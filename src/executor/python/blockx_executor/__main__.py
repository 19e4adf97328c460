"""`python3 -m blockx_executor --socket PATH ...` (with src/executor/python on sys.path)."""

import sys

from blockx_executor.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
