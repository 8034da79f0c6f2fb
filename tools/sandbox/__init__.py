"""Run the model's Python in an isolated, persistent worker process.

    with Sandbox(handler, namespace={"servers": {"git": ["git_status"]},
                                      "helpers": ["search_tools", "tool_help"]}) as box:
        result = box.execute("git.git_status(repo_path='.')")

Inside, each server is an object whose tools are methods; a call becomes
``handler("tool", {"server", "tool", "args", "kwargs"})`` in the host, and the value it
returns comes back as a Python value (``ToolError`` raised by the handler is raised in
the cell with its message). The tool-call channel is the only way out of the sandbox.
``detect_isolation()`` says honestly which OS isolation this machine gives; where it
gives none (rlimits), a ``CellGate`` lets a cell run only when someone allowed it.
"""

from deskmate.tools.sandbox.client import Sandbox
from deskmate.tools.sandbox.gate import CellApprover, CellDecision, CellGate, CellRequest
from deskmate.tools.sandbox.isolation import detect_isolation
from deskmate.tools.sandbox.results import (
    CellResult,
    Isolation,
    Limits,
    RequestFiles,
    SandboxError,
    ToolError,
)

__all__ = ["CellApprover", "CellDecision", "CellGate", "CellRequest", "CellResult",
           "Isolation", "Limits", "RequestFiles", "Sandbox", "SandboxError", "ToolError",
           "detect_isolation"]
