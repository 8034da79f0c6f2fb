"""``deskmate run``: the agent on one task, headless, with your MCP servers."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import click

from deskmate.app.cli.common import EXIT_INTERRUPTED, Env, fail
from deskmate.app.cli.model_loading import load_model


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
@click.pass_obj
def run(env: Env, task: tuple[str, ...], model: str | None, mcp_config: Path | None,
        mode: str | None, yes: bool, yes_all: bool, max_steps: int | None,
        max_tokens: int | None, as_json: bool,
        no_record: bool) -> None:
    """Solve TASK with the agent (`-` reads it from standard input)."""
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.factory import build_agent, options_from_config
    from deskmate.app.toolspace import mcp_log_dir
    from deskmate.tools.hub import Hub
    from deskmate.tools.policy import Policy
    from deskmate.tools.sandbox import SandboxError

    text = sys.stdin.read() if task == ("-",) else " ".join(task)
    if mcp_config is not None:  # same as `deskmate --mcp-config FILE run …`
        env.use_servers_file(mcp_config)
    servers = [s for s in env.config.mcp.servers.values() if s.enabled]
    interactive = sys.stdin.isatty() and not as_json and task != ("-",)
    policy = Policy(trusted_servers={s.name for s in servers if s.trust}, yes=yes,
                    yes_all=yes_all, approver=_ask if interactive else None)
    llm = load_model(env, model)
    mode = mode or env.config.agent.mode
    options = options_from_config(env.config, max_steps=max_steps, max_tokens=max_tokens)
    hub = Hub(servers, mcp_log_dir()) if servers else None
    try:
        if hub is not None:
            for state in hub.start():
                if state.status != "ready":
                    click.echo(f"warning: MCP server {state.name} is {state.status}: "
                               f"{state.error.splitlines()[0] if state.error else ''}", err=True)
        try:
            runtime = build_agent(llm, hub=hub, mode=mode, policy=policy, **options)
        except SandboxError as exc:
            fail(f"the Python sandbox could not start: {exc}\n"
                 "(code mode runs the model's code in it; --mode eager does not need it)")
        recorder = None if no_record else _recorder(llm, mode)
        cancel = threading.Event()
        answer, finished = "", None
        out = _Printer(quiet=as_json)
        # Ctrl-C cancels the turn at once (the running cell, tool call or model call
        # sees the event) and the turn still ends, recorded as cancelled; a second
        # Ctrl-C gives up waiting.
        previous = signal.signal(signal.SIGINT, _on_interrupt(cancel))
        try:
            for event in runtime.agent.run(text, cancel):
                if recorder is not None:
                    recorder.record(event)
                out.show(event)
                if isinstance(event, ev.FinalAnswer):
                    answer = event.text
                elif isinstance(event, ev.TurnFinished):
                    finished = event
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        finally:
            signal.signal(signal.SIGINT, previous)
            if runtime.sandbox is not None:
                runtime.sandbox.close()
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
            "session": recorder.session_id if recorder else None}))
    elif recorder is not None:
        click.echo(click.style(f"[session {recorder.session_id} · {finished.status} · "
                               f"{finished.steps} steps · {finished.tool_calls} tool calls · "
                               f"{finished.wall_s:.1f} s]", dim=True), err=True)
    if finished.status == "cancelled":
        fail("interrupted", EXIT_INTERRUPTED)


def _on_interrupt(cancel: threading.Event):
    def handler(signum, frame) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        click.echo("\ncancelling… (Ctrl-C again to quit at once)", err=True)

    return handler


def _recorder(llm, mode: str):
    from deskmate.app.store import Recorder, open_db

    return Recorder.new(open_db(), model=llm.info.name, adapter=llm.info.adapter, mode=mode)


def _ask(request) -> str:
    tool = request.tool
    args = json.dumps(request.arguments, ensure_ascii=False)
    danger = " (destructive)" if tool.destructive else ""
    click.echo(f"\nallow {tool.server}.{tool.name}{danger} with {args}?", err=True)
    choice = click.prompt("[y] once  [a] always this tool  [t] trust this server  [n] deny",
                          type=click.Choice(["y", "a", "t", "n"]), default="n", err=True)
    return {"y": "allow_once", "a": "allow_tool", "t": "trust_server", "n": "deny"}[choice]


class _Printer:
    """Streams the agent's work to the terminal: thoughts and code, outputs, the answer."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def show(self, event) -> None:
        from deskmate.app.agent import events as ev

        if self.quiet:
            return
        if isinstance(event, ev.ModelDelta):
            click.echo(click.style(event.text, dim=True), nl=False)
        elif isinstance(event, ev.ModelMessage):
            click.echo()
        elif isinstance(event, ev.ToolCallFinished):
            mark = click.style("✗", fg="red") if event.is_error else click.style("✓", fg="green")
            click.echo(f"  {mark} {event.server}.{event.tool} ({event.duration_s:.2f} s)",
                       err=True)
        elif isinstance(event, ev.Observation):
            click.echo(click.style(event.content, fg="cyan"))
        elif isinstance(event, ev.FinalAnswer):
            click.echo(click.style("\n" + event.text, bold=True))
        elif isinstance(event, ev.AgentError):
            click.echo(click.style(f"error: {event.message}", fg="red"), err=True)
