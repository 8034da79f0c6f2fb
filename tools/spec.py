"""The shape of a tool as deskmate sees it, whatever server or snapshot it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolSpec:
    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    # The JSON Schema of the tool's structured result ({} when it declares none).
    output_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    @property
    def destructive(self) -> bool:
        # MCP's default for destructiveHint is true when the tool is not read-only.
        if self.read_only:
            return False
        return bool(self.annotations.get("destructiveHint", True))

    @classmethod
    def from_mcp_json(cls, server: str, tool: dict[str, Any]) -> ToolSpec:
        """From a ``tools/list`` entry (camelCase JSON, as in recorded snapshots)."""
        return cls(
            server=server,
            name=tool["name"],
            description=tool.get("description") or "",
            input_schema=tool.get("inputSchema") or tool.get("input_schema") or {},
            annotations=tool.get("annotations") or {},
            output_schema=_object(tool.get("outputSchema") or tool.get("output_schema")),
        )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
