"""What a cell sees: one object per server whose tools are methods, the helpers,
``ToolError``; every call leaves through the channel."""

import builtins

from .channel import Channel, ToolError
from .state import CELLS_MODULE, Toolspace
from .text_value import as_text


def check_json(value: object, what: str) -> None:
    if value is None or isinstance(value, (str, int, float, bool)):
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            check_json(item, what)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{what}: dict keys must be strings, got {key!r}")
            check_json(item, what)
        return
    raise TypeError(f"{what} must be JSON values (str, int, float, bool, None, list, "
                    f"dict), got {type(value).__name__}")


class Server:
    """One MCP server: its tools are methods; unknown names still ask the host."""

    __module__ = CELLS_MODULE
    _channel: Channel
    _name: str
    _tools: list[str]

    def __init__(self, channel: Channel, name: str, tools: list[str]) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_tools", list(tools))

    def __getattr__(self, tool: str):
        if tool.startswith("_"):
            raise AttributeError(tool)
        channel, server = self._channel, self._name

        def call(*args, **kwargs):
            check_json(args, "tool arguments")
            check_json(kwargs, "tool arguments")
            return as_text(channel.call("tool", {"server": server, "tool": tool,
                                                 "args": list(args), "kwargs": kwargs}))

        call.__name__ = call.__qualname__ = tool
        call.__module__ = CELLS_MODULE
        call.__doc__ = f"Tool {server}.{tool}; tool_help({server!r}, {tool!r}) describes it."
        return call

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"server {self._name!r} is read-only")

    def __dir__(self) -> list[str]:
        return list(self._tools)

    def __repr__(self) -> str:
        return f"<server {self._name}: {len(self._tools)} tools; dir() lists them>"


def build_namespace(channel: Channel, spec: dict, toolspace: Toolspace) -> dict:
    """The cells' globals for the setup frame's ``namespace`` spec (servers, helpers)."""
    ns: dict = {"__name__": "__main__", "__builtins__": builtins, "ToolError": ToolError}
    for name, tools in (spec.get("servers") or {}).items():
        ns[name] = Server(channel, name, tools)
    # Small models often call a tool bare (`read_file(...)`): a tool name that only one
    # server has is also a plain function, unless the name is taken.
    for tool, servers in toolspace.tool_servers.items():
        if len(servers) == 1 and tool not in ns:
            ns[tool] = getattr(ns[servers[0]], tool)
    helpers = spec.get("helpers") or []
    if "search_tools" in helpers:
        def search_tools(query: str, k: int = 5):
            """Search all connected tools by what they do; returns the best k matches."""
            return channel.call("search_tools", {"query": query, "k": k})
        search_tools.__module__ = CELLS_MODULE
        ns["search_tools"] = search_tools
    if "tool_help" in helpers:
        def tool_help(server: str, *names: str) -> str:
            """Python signatures and docs of a server's tools (all of them if no names)."""
            return channel.call("tool_help", {"server": server, "names": list(names)})
        tool_help.__module__ = CELLS_MODULE
        ns["tool_help"] = tool_help
    if "read_resource" in helpers:
        def read_resource(uri: str) -> str:
            """The contents of an MCP resource (a resource_link's uri, say) as text."""
            return as_text(channel.call("read_resource", {"uri": uri}))
        read_resource.__module__ = CELLS_MODULE
        ns["read_resource"] = read_resource
    return ns
