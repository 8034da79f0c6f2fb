"""Tool results and errors, independent of the mcp SDK's types."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal


class ToolCallError(Exception):
    """A tool call that did not produce a result (the server's own errors are results)."""


class ServerUnavailable(ToolCallError):
    pass


class ToolTimeout(ToolCallError):
    pass


class ToolCancelled(ToolCallError):
    pass


class ToolDisabled(ToolCallError):
    """The user turned this tool off (``disabled_tools`` in its server's config)."""


@dataclass(frozen=True)
class ContentItem:
    kind: Literal["text", "image", "audio", "resource", "resource_link"]
    text: str = ""  # the text itself, or a text resource's contents
    mime_type: str = ""
    uri: str = ""
    size: int | None = None  # bytes of binary data we did not keep

    def describe(self) -> str:
        if self.kind == "text":
            return self.text
        if self.kind == "resource" and self.text:
            return self.text
        size = f", {self.size:,} bytes" if self.size is not None else ""
        where = f" {self.uri}" if self.uri else ""
        return f"[{self.kind}{where} {self.mime_type}{size}]".replace("  ", " ")


@dataclass(frozen=True)
class ToolResult:
    server: str
    tool: str
    content: tuple[ContentItem, ...] = ()
    structured: Any = None
    is_error: bool = False
    duration_s: float = 0.0

    @property
    def text(self) -> str:
        return "\n".join(item.describe() for item in self.content)

    def value(self) -> Any:
        """The result as a Python value: structured content, else JSON text, else text."""
        if self.structured is not None:
            # FastMCP wraps non-object returns as {"result": ...}.
            if isinstance(self.structured, dict) and list(self.structured) == ["result"]:
                return self.structured["result"]
            # An object whose one field is a string is that text wrapped (the filesystem
            # server's {"content": "..."} for a file read or a listing): a small model
            # reads it as the text it asked for, so it gets the string.
            text = text_wrapper(self.structured)
            return self.structured if text is None else text
        text = self.text
        try:
            return json.loads(text)
        except (json.JSONDecodeError, ValueError):
            return text


def text_wrapper(structured: Any) -> str | None:
    """The string of a one-field object such as ``{"content": "..."}``; None otherwise."""
    if isinstance(structured, dict) and len(structured) == 1:
        (value,) = structured.values()
        if isinstance(value, str):
            return value
    return None


def from_mcp(server: str, tool: str, result: Any, duration_s: float) -> ToolResult:
    """Convert an ``mcp.types.CallToolResult``; binary payloads become descriptors."""
    items = [item for block in result.content or [] if (item := content_item(block))]
    return ToolResult(server=server, tool=tool, content=tuple(items),
                      structured=result.structured_content, is_error=bool(result.is_error),
                      duration_s=duration_s)


def content_item(block: Any) -> ContentItem | None:
    """One MCP content block (of a tool result or a prompt message), None if unknown."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return ContentItem("text", text=block.text)
    if kind in ("image", "audio"):
        return ContentItem(kind, mime_type=block.mime_type or "",
                           size=len(block.data) * 3 // 4 if block.data else 0)
    if kind == "resource":
        res = block.resource
        text = getattr(res, "text", None)
        blob = getattr(res, "blob", None)
        return ContentItem("resource", text=text or "", uri=str(res.uri),
                           mime_type=getattr(res, "mime_type", None) or "",
                           size=len(blob) * 3 // 4 if blob else None)
    if kind == "resource_link":
        return ContentItem("resource_link", uri=str(block.uri),
                           mime_type=block.mime_type or "", size=block.size,
                           text=block.description or block.name or "")
    return None


def schema_mismatch(server: str, tool: str, error: Exception) -> ToolResult | None:
    """A tool result the SDK refused because it breaks the tool's own ``outputSchema``,
    as the tool error it is (the server answered; it is not unavailable), else None."""
    text = str(error)
    if not isinstance(error, RuntimeError) or not any(mark in text for mark in _SCHEMA_MARKS):
        return None
    first = text.split("\n\n")[0]  # jsonschema's report goes on with the whole schema
    return ToolResult(server=server, tool=tool, is_error=True, content=(ContentItem(
        "text", text=f"the result does not match the tool's output schema: {first}"),))


# The SDK's messages when it checks structured content (ClientSession.validate_tool_result).
_SCHEMA_MARKS = ("Invalid structured content returned by tool",
                 "has an output schema but did not return structured content",
                 "Invalid schema for tool")
