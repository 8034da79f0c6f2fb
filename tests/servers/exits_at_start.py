"""Broken on purpose: complains on stderr and exits before speaking MCP."""

import sys

sys.stderr.write("fatal: missing API key (set TOY_API_KEY)\n")
sys.exit(1)
