"""`python -m packages.archives < REQUEST_JSON`: the listing child; one JSON answer on stdout."""

import json
import sys

from packages.archives.child import child_main

if __name__ == "__main__":  # not when a test of the tree imports every module
    sys.stdout.write(json.dumps(child_main(json.loads(sys.stdin.read()))))
