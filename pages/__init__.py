"""The app's pages. Importing this package comes before anything imports torch in the server."""

import os

# Every browser session runs its script in its own thread, and each calling thread gets its own
# OpenMP team. Spinning (the default) idle workers then steal the cores from each other: on a busy
# 2-core machine one trace took 0.7-1.3 s instead of 13 ms. Sleeping workers cost nothing measurable
# when idle, and change no result (same thread count).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
