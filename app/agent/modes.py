"""The agent's two action formats, by name: the one place ``Mode`` is declared.

``code``: the model writes a fenced Python block that runs in the sandbox and calls tools
as methods (app/agent/actions_code.py). ``eager``: every tool's JSON schema goes through
the chat template and the model answers with native tool calls (app/agent/actions_eager.py).
"""

from __future__ import annotations

from typing import Literal

Mode = Literal["code", "eager"]
MODES: tuple[Mode, ...] = ("code", "eager")  # in the order the CLI and the eval list them
