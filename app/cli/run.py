"""``deskmate run``: the agent on one task, headless, with your MCP servers.

Standard output carries the answer only (with ``--json``, the one JSON object), so
``deskmate run … | cmd`` and ``$(deskmate run …)`` get exactly that. What the agent does
meanwhile goes to standard error, and only while it is a terminal: the live trace
(the model's text as it streams, tool calls, what the cells print), or with ``--json``
one line per model call and tool call. Errors, warnings and the closing session line
go to standard error always.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Literal, TextIO, cast

import click

from deskmate.app.cli.common import EXIT_INTERRUPTED, Env, fail
from deskmate.app.cli.model_loading import load_model
from deskmate.app.cli.sandbox import require_isolation, unisolated_option

if TYPE_CHECKING:  # the agent loads with the command, not with `deskmate --help`
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.modes import Mode
    from deskmate.tools.policy import ApprovalRequest, Decision

# live: the whole trace as it happens; steps: a line per model call and tool call;
# errors: errors only (standard error is a file or a pipe).
TraceLevel = Literal["live", "steps", "errors"]


@click.command()
@click.argument("task", nargs=-1, required=True)
@click.option("--model", "-m", help="Model for this run (overrides the config).")
@click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Use the servers in this file (Claude/.mcp.json dialects) instead of "
                   "the config's.")
@click.option("--mode", type=click.Choice(["code", "eager"]),
              help="code: Python that calls tools; eager: native JSON tool calls "
                   "(default: [agent] mode).")
@click.option("--yes", is_flag=True, help="Approve every non-destructive tool call.")
@click.option("--yes-all", is_flag=True, help="Approve every tool call, destructive ones too.")
@click.option("--max-steps", type=click.IntRange(min=1),
              help="Model calls before the agent stops (default: [agent] max_steps).")
@click.option("--max-tokens", type=click.IntRange(min=1),
              help="Most tokens per model reply (default: [model] max_tokens, at most 2048).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.option("--no-record", is_flag=True, help="Do not save the session.")
@unisolated_option
@click.pass_obj
def run(env: Env, task: tuple[str, ...], model: str | None, mcp_config: Path | None,
        mode: Mode | None, yes: bool, yes_all: bool, max_steps: int | None,
        max_tokens: int | None, as_json: bool,
        no_record: bool, allow_unisolated: bool) -> None:
    """Solve TASK with the agent (`-` reads it from standard input).

    Standard output gets the answer only (or the --json object); the agent's work is
    shown on standard error while that is a terminal."""
    from deskmate.app.agent import events as ev
    from deskmate.app.cli.questions import TerminalAsker
    from deskmate.app.llm.sampling import ModelGenerate
    from deskmate.app.services.conversation import Conversation
    from deskmate.app.services.mcp_input import InputError
    from deskmate.app.toolspace import mcp_log_dir, oauth_setup
    from deskmate.tools.hub import Hub
    from deskmate.tools.hub.sampling import Sampler
    from deskmate.tools.hub.sampling import decline as decline_sampling
    from deskmate.tools.hub.status import not_ready
    from deskmate.tools.sandbox import SandboxError

    text = sys.stdin.read() if task == ("-",) else " ".join(task)
    if mcp_config is not None:  # same as `deskmate --mcp-config FILE run …`
        env.use_servers_file(mcp_config)
    servers = [s for s in env.config.mcp.servers.values() if s.enabled]
    interactive = sys.stdin.isatty() and not as_json and task != ("-",)
    cancel = threading.Event()
    # Servers' questions are asked on the terminal; with no one there, they are declined.
    asker = TerminalAsker(cancel, sys.stdin) if interactive else None
    # No KV state kept: saving it prunes the others, the one a TUI session may resume.
    # The config admits only the modes there are (``choices``), as --mode does.
    conversation = Conversation(env.config, _ask if interactive else None,
                                mode=mode or cast("Mode", env.config.agent.mode),
                                record=not no_record, yes=yes, yes_all=yes_all,
                                max_steps=max_steps, max_tokens=max_tokens, keep_kv_state=False,
                                asker=asker)
    if conversation.mode == "code":
        require_isolation("run", allow_unisolated)
    llm = load_model(env, model)
    # Servers may use the model with the person's approval; with no one there, declined.
    sampler = Sampler(asker.approve_sampling if asker else decline_sampling,
                      ModelGenerate(lambda: llm, lambda: cancel))
    hub = Hub(servers, mcp_log_dir(), oauth=oauth_setup(), sampler=sampler) if servers else None
    try:
        if hub is not None:
            for state in hub.start():
                if state.status != "ready":
                    click.echo(f"warning: {not_ready(state)}", err=True)
        try:
            conversation.build(llm, hub, fall_back=False)
        except SandboxError as exc:
            fail(f"the Python sandbox could not start: {exc}\n"
                 "(code mode runs the model's code in it; --mode eager does not need it)")
        answer, finished = "", None
        trace = Trace(trace_level(as_json, is_terminal(sys.stderr)))
        # Ctrl-C cancels the turn at once (the running cell, tool call or model call
        # sees the event) and the turn still ends, recorded as cancelled; a second
        # Ctrl-C gives up waiting.
        previous = signal.signal(signal.SIGINT, _on_interrupt(cancel))
        try:
            for event in conversation.run(text, cancel):
                trace.show(event)
                if isinstance(event, ev.FinalAnswer):
                    answer = event.text
                elif isinstance(event, ev.TurnFinished):
                    finished = event
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except InputError as exc:  # a /server:prompt that cannot be used
            fail(str(exc))
        finally:
            signal.signal(signal.SIGINT, previous)
            conversation.close()
    finally:
        if hub is not None:
            hub.close()
        llm.close()
    assert finished is not None
    if as_json:
        click.echo(json.dumps({
            "final_answer": answer, "status": finished.status, "steps": finished.steps,
            "model_calls": finished.model_calls, "tool_calls": finished.tool_calls,
            "prompt_tokens": finished.prompt_tokens,
            "completion_tokens": finished.completion_tokens,
            "wall_s": round(finished.wall_s, 3),
            "session": conversation.session_id}))
    else:
        if answer:  # click leaves out the bold where standard output is not a terminal
            click.echo(click.style(answer, bold=True))
        if conversation.session_id is not None:
            click.echo(click.style(f"[session {conversation.session_id} · {finished.status} · "
                                   f"{finished.steps} steps · {finished.tool_calls} tool calls "
                                   f"· {finished.wall_s:.1f} s]", dim=True), err=True)
    if finished.status == "cancelled":
        fail("interrupted", EXIT_INTERRUPTED)


def is_terminal(stream: TextIO) -> bool:
    return stream.isatty()


def trace_level(as_json: bool, stderr_is_terminal: bool) -> TraceLevel:
    if not stderr_is_terminal:
        return "errors"  # a log file gets no token-by-token stream
    return "steps" if as_json else "live"


def _on_interrupt(cancel: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        click.echo("\ncancelling… (Ctrl-C again to quit at once)", err=True)

    return handler


def _ask(request: ApprovalRequest) -> Decision:
    tool = request.tool
    args = json.dumps(request.arguments, ensure_ascii=False)
    danger = " (destructive)" if tool.destructive else ""
    click.echo(f"\nallow {tool.server}.{tool.name}{danger} with {args}?", err=True)
    choice = click.prompt("[y] once  [a] always this tool  [t] trust this server  [n] deny",
                          type=click.Choice(["y", "a", "t", "n"]), default="n", err=True)
    decisions: dict[str, Decision] = {"y": "allow_once", "a": "allow_tool",
                                      "t": "trust_server", "n": "deny"}
    return decisions[choice]


class Trace:
    """Shows the agent's work on standard error, at one ``TraceLevel``; never the
    answer, which ``run`` prints once, on standard output."""

    def __init__(self, level: TraceLevel) -> None:
        self.level = level

    def show(self, event: ev.AgentEvent) -> None:
        from deskmate.app.agent import events as ev

        if isinstance(event, ev.AgentError):
            _err(click.style(f"error: {event.message}", fg="red"))
        elif isinstance(event, ev.ElicitationAnswered) and event.decided_by != "user":
            _err(click.style(f"warning: a server's question was answered {event.action}: "
                             f"{event.reason}", fg="yellow"))
        elif isinstance(event, ev.ToolCallFinished) and self.level != "errors":
            mark = click.style("✗", fg="red") if event.is_error else click.style("✓", fg="green")
            _err(f"  {mark} {event.server}.{event.tool} ({event.duration_s:.2f} s)")
        elif self.level == "live":
            self._live(event)
        elif self.level == "steps" and isinstance(event, ev.ModelMessage):
            u = event.usage
            _err(click.style(f"step {event.step} · {u.prompt_tokens:,} prompt · "
                             f"{u.completion_tokens:,} generated · {u.total_s:.1f} s", dim=True))

    def _live(self, event: ev.AgentEvent) -> None:
        from deskmate.app.agent import events as ev

        if isinstance(event, ev.ModelDelta):
            _err(click.style(event.text, dim=True), nl=False)
        elif isinstance(event, ev.ModelMessage):
            _err("")
        elif isinstance(event, ev.Observation):
            _err(click.style(event.content, fg="cyan"))
        elif isinstance(event, ev.ToolProgress):
            from deskmate.tools.hub.calls import Progress

            news = Progress(event.progress, event.total, event.message)
            _err(click.style(f"  … {news.bar()}", dim=True))
        elif isinstance(event, ev.TurnFinished):
            _err("")  # a blank line between the trace and the answer


def _err(text: str, nl: bool = True) -> None:
    click.echo(text, nl=nl, err=True)
