"""The parts of the sandbox `World` (telegram/sandbox/world.py), one job each; callers use `World`."""
