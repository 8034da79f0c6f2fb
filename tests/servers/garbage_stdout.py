"""Broken on purpose: prints logs on stdout, where JSON-RPC should be, and never answers."""

import sys
import time

for _request in sys.stdin:
    print("Starting server... listening on stdout!", flush=True)
    time.sleep(0.1)
time.sleep(60)
