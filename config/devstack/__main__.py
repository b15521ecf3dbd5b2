import signal
import sys

from config.devstack import _interrupt, main

signal.signal(signal.SIGTERM, _interrupt)  # `kill` (and systemd's stop) cleans up like Ctrl-C
sys.exit(main(sys.argv[1:]))
