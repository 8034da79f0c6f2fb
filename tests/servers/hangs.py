"""Broken on purpose: reads requests and never answers."""

import sys
import time

sys.stdin.read()
time.sleep(600)
