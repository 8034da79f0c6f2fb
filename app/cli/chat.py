"""``deskmate chat``: stream one answer from the model, no tools.

The smallest proof that the runtime works, and handy in scripts (``--json``). With no
prompt, in a terminal, it is a chat in the terminal (``app.cli.repl``).
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import asdict

import click

from deskmate.app.cli.common import EXIT_INTERRUPTED, Env
from deskmate.app.cli.model_loading import load_model


@click.command()
@click.argument("prompt", nargs=-1)
@click.option("--model", "-m", help="Model for this run (overrides the config).")
@click.option("--system", "-s", default="", help="System prompt.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Most tokens to generate.")
@click.option("--temperature", "-t", type=click.FloatRange(min=0), help="0 is greedy.")
@click.option("--seed", type=int, help="Sampling seed, for repeatable answers.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (text, finish_reason, usage) instead of streaming.")
@click.option("--stats", is_flag=True, help="Print token usage and speed to stderr.")
@click.pass_obj
def chat(env: Env, prompt: tuple[str, ...], model: str | None, system: str,
         max_tokens: int | None, temperature: float | None, seed: int | None,
         as_json: bool, stats: bool) -> None:
    """Ask the model one question and stream its answer (no tools).

    PROMPT is the question; `-` reads it from standard input. With no PROMPT, in a
    terminal: a chat, each answer streamed and the session recorded (Ctrl-C cancels a
    turn, Ctrl-D quits; /help lists /new, /compact, /context and /exit).
    """
    from deskmate.app.llm import ChatMessage, Delta, Finished, GenerationParams

    if not prompt:
        if not (sys.stdin.isatty() and sys.stdout.isatty()) or as_json:
            raise click.UsageError("no PROMPT: give one, `-` to read it from standard "
                                   "input, or run `deskmate chat` alone in a terminal "
                                   "to chat")
        _chat_in_terminal(env, model, max_tokens, temperature, seed, system)
        return
    text = sys.stdin.read() if prompt == ("-",) else " ".join(prompt)
    cfg = env.config.model
    llm = load_model(env, model)
    messages = [ChatMessage("system", system)] if system else []
    messages.append(ChatMessage("user", text))
    params = GenerationParams(
        max_tokens=max_tokens or cfg.max_tokens,
        temperature=cfg.temperature if temperature is None else temperature,
        seed=seed if seed is not None else (cfg.seed if cfg.seed >= 0 else None),
    )
    cancel = threading.Event()
    result = None
    try:
        for event in llm.stream(messages, params, cancel):
            if isinstance(event, Delta) and not as_json:
                click.echo(event.text, nl=False)
            elif isinstance(event, Finished):
                result = event
    except KeyboardInterrupt:
        cancel.set()
        click.echo("\n[cancelled]", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        llm.close()
    assert result is not None
    if as_json:
        click.echo(json.dumps({"model": llm.info.name, "text": result.text,
                               "finish_reason": result.finish_reason,
                               "usage": asdict(result.usage)}))
        return
    click.echo()
    if stats:
        u = result.usage
        click.echo(f"[{u.prompt_tokens} prompt tokens ({u.reused_tokens} reused), "
                   f"{u.completion_tokens} generated, first token {u.ttft_s:.2f}s, "
                   f"{u.decode_tps:.1f} tok/s, {result.finish_reason}]", err=True)


def _chat_in_terminal(env: Env, model: str | None, max_tokens: int | None,
                      temperature: float | None, seed: int | None, system: str) -> None:
    from dataclasses import replace

    from deskmate.app.cli.repl import repl
    from deskmate.app.services.conversation import Conversation

    if system:
        raise click.UsageError("--system is for one question; the terminal chat uses the "
                               "agent's system prompt")
    config = env.config
    settings = {k: v for k, v in (("temperature", temperature), ("seed", seed)) if v is not None}
    if settings:
        config = replace(config, model=replace(config.model, **settings))
    llm = load_model(env, model)
    conversation = Conversation(config, None, mode="eager", max_tokens=max_tokens)
    try:
        repl(conversation, llm)
    finally:
        conversation.close()
        llm.close()
