"""`python -m packages.archives FD`: the listing children's fork server (forks.py), its parent on socket FD."""

import sys

from packages.archives.child import child_run
from packages.archives.forks import serve

if __name__ == "__main__":  # not when a test of the tree imports every module
    serve(int(sys.argv[1]), child_run)
