"""What a server publishes besides tools — prompts, resources, resource templates — and
what reading or getting one gives back, independent of the mcp SDK's types.

The ``*_from_mcp`` functions convert the SDK's results (``listing.py`` lists them). The
hub keeps these in each server's state and the faces use them: ``/server:prompt`` in the
chat, ``@server:uri`` mentions, the sandbox's ``read_resource``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from deskmate.tools.hub.results import ContentItem, content_item
from deskmate.tools.spec import ToolSpec


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptSpec:
    server: str
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    def missing(self, given: dict[str, str]) -> list[PromptArgument]:
        """The required arguments ``given`` lacks."""
        return [a for a in self.arguments if a.required and not given.get(a.name)]


@dataclass(frozen=True)
class ResourceSpec:
    server: str
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class TemplateSpec:
    server: str
    uri_template: str
    name: str = ""
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class ResourceContents:
    """What ``resources/read`` gave: text parts as they are, binary ones described."""

    server: str
    uri: str
    items: tuple[ContentItem, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(item.describe() for item in self.items)


@dataclass(frozen=True)
class PromptMessage:
    role: str  # "user" or "assistant"
    text: str


@dataclass(frozen=True)
class PromptText:
    """What ``prompts/get`` gave: its messages, as text."""

    server: str
    name: str
    messages: tuple[PromptMessage, ...] = ()

    @property
    def text(self) -> str:
        """The messages as one prompt for the model. A prompt of one user message is that
        message; longer ones keep who says what."""
        if len(self.messages) == 1 and self.messages[0].role == "user":
            return self.messages[0].text
        return "\n\n".join(f"[{m.role}]\n{m.text}" for m in self.messages)


@dataclass(frozen=True)
class Published:
    """Everything one server lists, as one snapshot."""

    tools: tuple[ToolSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    resources: tuple[ResourceSpec, ...] = ()
    templates: tuple[TemplateSpec, ...] = ()


def tool_from_mcp(server: str, tool: Any) -> ToolSpec:
    annotations = (tool.annotations.model_dump(by_alias=True, exclude_none=True)
                   if tool.annotations else {})
    return ToolSpec(server=server, name=tool.name, description=tool.description or "",
                    input_schema=dict(tool.input_schema or {}), annotations=annotations,
                    output_schema=dict(tool.output_schema or {}))


def prompt_from_mcp(server: str, prompt: Any) -> PromptSpec:
    return PromptSpec(server, prompt.name, prompt.description or "", tuple(
        PromptArgument(a.name, a.description or "", bool(a.required))
        for a in prompt.arguments or []))


def resource_from_mcp(server: str, resource: Any) -> ResourceSpec:
    return ResourceSpec(server, str(resource.uri), resource.name or "",
                        resource.description or "", resource.mime_type or "")


def template_from_mcp(server: str, template: Any) -> TemplateSpec:
    return TemplateSpec(server, str(template.uri_template), template.name or "",
                        template.description or "", template.mime_type or "")


def contents_from_mcp(server: str, uri: str, result: Any) -> ResourceContents:
    items = []
    for part in result.contents or []:
        text, blob = getattr(part, "text", None), getattr(part, "blob", None)
        items.append(ContentItem("resource", text=text or "", uri=str(part.uri),
                                 mime_type=part.mime_type or "",
                                 size=len(blob) * 3 // 4 if blob else None))
    return ResourceContents(server, uri, tuple(items))


def prompt_text_from_mcp(server: str, name: str, result: Any) -> PromptText:
    messages = []
    for message in result.messages or []:
        item = content_item(message.content)
        messages.append(PromptMessage(str(message.role), item.describe() if item else ""))
    return PromptText(server, name, tuple(messages))


def owner(uri: str, resources: Iterable[ResourceSpec],
          templates: Iterable[TemplateSpec]) -> str | None:
    """The server that lists ``uri``, or whose template could have made it; None if none."""
    from deskmate.tools.uri_template import matches

    for resource in resources:
        if resource.uri == uri:
            return resource.server
    for template in templates:
        if matches(template.uri_template, uri):
            return template.server
    return None
