"""Assemble a working agent from the config: servers, catalog, sandbox, bridge, prompt.

The CLI's ``run``, the TUI and the eval harness all build their agent here, so they get
the same prompt, the same tool channel and the same permission rules.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from deskmate.app.agent.actions import Actions
from deskmate.app.agent.actions_code import CodeActions
from deskmate.app.agent.actions_eager import EagerActions, tool_schemas
from deskmate.app.agent.bridge import ToolBridge
from deskmate.app.agent.loop import Agent, AgentLimits
from deskmate.app.agent.missing_step import missing_step
from deskmate.app.agent.modes import Mode
from deskmate.app.agent.prompt import EAGER_PROMPT, code_system_prompt, example_form
from deskmate.app.agent.toolchanges import catalog_of, describe_changes
from deskmate.app.llm.base import ChatMessage, ChatModel
from deskmate.tools.catalog import Catalog
from deskmate.tools.index import build_index
from deskmate.tools.policy import Policy
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:
    from deskmate.app.agent.experience import Experience
    from deskmate.app.config import Config
    from deskmate.tools.hub import ServerState
    from deskmate.tools.hub.calls import CallHooks
    from deskmate.tools.hub.elicitation import Asker
    from deskmate.tools.hub.results import ToolResult
    from deskmate.tools.sandbox import CellGate, Limits, Sandbox

INDEX_TOKENS = 600  # budget of the server index in the system prompt
SIGNATURE_TOKENS = 1000  # budget of every signature listed instead, when the catalog is small


class ToolHub(Protocol):
    """What the agent needs of a started hub: deskmate.tools.hub.Hub, or a wrapper of one
    (the training's gated hub)."""

    def tools(self) -> list[ToolSpec]: ...

    def states(self) -> list[ServerState]: ...

    def call(self, server: str, tool: str, arguments: dict[str, Any] | None = None, *,
             cancel: threading.Event | None = None, hooks: CallHooks | None = None
             ) -> ToolResult: ...


@dataclass
class AgentRuntime:
    agent: Agent
    catalog: Catalog
    hub: ToolHub | None = None
    sandbox: Sandbox | None = None  # code mode's, with its isolation report for the UI
    server_states: list[ServerState] = field(default_factory=list)
    index_tokens: int = INDEX_TOKENS  # the index's budget, again when the tools change
    signature_tokens: int = SIGNATURE_TOKENS  # the same for the listing of every signature

    def close(self) -> None:
        """Close what build_agent made (the sandbox); the hub belongs to the caller."""
        if self.sandbox is not None:
            self.sandbox.close()


def count_tokens_for(model: ChatModel) -> Callable[[str], int]:
    tokenize = getattr(model, "tokenize", None)
    if tokenize is not None:
        return lambda text: len(tokenize(text))
    return lambda text: len(text) // 4 + 1  # servers we cannot tokenize for: an estimate


def build_agent(model: ChatModel, *, hub: ToolHub | None = None, mode: Mode = "code",
                policy: Policy | None = None, limits: AgentLimits = AgentLimits(),
                workdir: Path | None = None, sandbox_limits: Limits | None = None,
                index_tokens: int = INDEX_TOKENS, signature_tokens: int = SIGNATURE_TOKENS,
                search_cache: Path | None = None, experience: Experience | None = None,
                transcript: Iterable[ChatMessage] = (), asker: Asker | None = None,
                cell_gate: CellGate | None = None) -> AgentRuntime:
    """An agent over the tools of ``hub`` (already started), or over no tools at all.

    ``asker`` answers the questions servers ask during calls; without one (headless
    runs, eval, training rollouts) they are declined. ``cell_gate`` decides whether a
    cell runs where the sandbox does not isolate it; without one it runs only when
    --allow-unisolated was given."""
    catalog = catalog_of(hub.tools(), hub.states()) if hub is not None else Catalog([])
    policy = policy or Policy()
    call = hub.call if hub is not None else _no_hub
    bridge = ToolBridge(catalog, call, policy, search_cache=search_cache,
                        read=getattr(hub, "read_resource", None))
    bridge.asker = asker
    bridge.disabled = _disabled(hub)
    sandbox = None
    actions: Actions
    index = ""
    if mode == "code":
        from deskmate.tools.sandbox import CellGate, Limits, Sandbox

        bridge.repeats_per_step = True  # a cell re-reads what it uses (turn_record.py)
        sandbox = Sandbox(bridge, namespace=bridge.namespace(),
                          limits=sandbox_limits or Limits(), workdir=workdir,
                          gate=cell_gate or CellGate())
        sandbox.start()
        index = build_index(catalog, count_tokens_for(model), index_tokens, signature_tokens)
        prompt = code_system_prompt(
            index, example_form(limits.example, model.info) == "turns")
        actions = CodeActions(sandbox, objects=bridge.objects,
                              returned=lambda: bridge.turn.returned, takers=bridge.takers,
                              missing=lambda request: missing_step(
                                  request, bridge.tools(), bridge.turn.called),
                              changes=lambda: bridge.turn.changes,
                              texts=lambda: bridge.turn.results,
                              deletes_refused=lambda: bridge.turn.deletes_refused)
    elif mode == "eager":
        prompt = EAGER_PROMPT
        actions = EagerActions(bridge)
    else:
        raise ValueError(f"unknown mode {mode!r}: use code or eager")
    agent = Agent(model, actions, bridge, system_prompt=prompt, limits=limits,
                  transcript=list(transcript))
    agent.experience = experience
    return AgentRuntime(agent=agent, catalog=catalog, hub=hub, sandbox=sandbox,
                        server_states=hub.states() if hub is not None else [],
                        index_tokens=index_tokens, signature_tokens=signature_tokens)


def follow_tools(runtime: AgentRuntime) -> str:
    """Take on the hub's tools if they changed since the agent was built (a server sent
    ``list_changed``); returns the note for the model ("" when nothing changed, or when
    the transcript is fresh and its system prompt will list the new tools)."""
    if runtime.hub is None:
        return ""
    catalog = catalog_of(runtime.hub.tools(), runtime.hub.states())
    note = describe_changes(runtime.catalog, catalog)
    if not note and catalog.servers() == runtime.catalog.servers():
        return ""
    runtime.catalog = catalog
    agent = runtime.agent
    agent.bridge.retool(catalog)
    agent.bridge.disabled = _disabled(runtime.hub)
    if isinstance(agent.actions, EagerActions):
        agent.actions.tools = tuple(tool_schemas(catalog))
    else:
        index = build_index(catalog, count_tokens_for(agent.model), runtime.index_tokens,
                            runtime.signature_tokens)
        agent.system_prompt = code_system_prompt(index, agent.example_turns)
    return note if agent.transcript else ""


def _disabled(hub: ToolHub | None) -> frozenset[tuple[str, str]]:
    """The tools turned off in the config (``Hub.tools()`` leaves them out already); a
    hub that cannot tell (a training wrapper) has none."""
    disabled = getattr(hub, "disabled_tools", None)
    return disabled() if disabled is not None else frozenset()


def _no_hub(server: str, tool: str, arguments: dict[str, Any],
            cancel: threading.Event | None = None, hooks: CallHooks | None = None) -> NoReturn:
    from deskmate.tools.hub import ServerUnavailable

    raise ServerUnavailable("no MCP servers are connected")


def options_from_config(config: Config, **overrides: float | None) -> dict[str, Any]:
    """``build_agent``'s settings from the config, the same for the app and ``run``."""
    from deskmate.app import paths

    limits, sandbox_limits = limits_from_config(config, **overrides)
    return dict(limits=limits, sandbox_limits=sandbox_limits,
                index_tokens=config.agent.index_tokens,
                signature_tokens=config.agent.signature_tokens,
                search_cache=paths.embeddings_cache(),
                experience=load_experience() if config.agent.experience else None)


def load_experience(path: Path | None = None, *, skip_same: bool = False
                    ) -> Experience | None:
    """The solved turns of the sessions database at ``path`` (default: the user's), for
    the agent to recall examples from; None when there are none or it cannot be read."""
    from deskmate.app.agent.experience import Experience
    from deskmate.app.store.db import open_db
    from deskmate.app.store.errors import StoreError
    from deskmate.app.store.solved import solved_turns

    try:
        with open_db(path, readonly=True) as db:
            solved = solved_turns(db)
    except StoreError:
        return None  # no sessions yet, or another schema: nothing to recall
    return Experience(solved, skip_same=skip_same) if solved else None


def limits_from_config(config: Config,
                       **overrides: float | None) -> tuple[AgentLimits, Limits]:
    """Agent and sandbox limits from the ``[agent]`` and ``[model]`` config sections."""
    from deskmate.tools.sandbox import Limits

    agent, model = config.agent, config.model
    limits = AgentLimits(max_steps=agent.max_steps, max_tool_calls=agent.max_tool_calls,
                         wall_s=agent.turn_timeout, observation_chars=agent.observation_chars,
                         max_tokens=min(model.max_tokens, 2048),
                         temperature=model.temperature,
                         example=agent.example, first_look=agent.first_look,
                         code_after_error=agent.code_after_error)
    limits = replace(limits, **{k: v for k, v in overrides.items() if v is not None})
    return limits, Limits(cell_timeout_s=agent.cell_timeout)
