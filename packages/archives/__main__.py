"""`python -m packages.archives < REQUEST_JSON`: the listing child; one JSON answer on stdout."""

import json
import sys

from packages.archives.child import child_main

sys.stdout.write(json.dumps(child_main(json.loads(sys.stdin.read()))))
