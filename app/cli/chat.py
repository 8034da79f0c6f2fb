"""``deskmate chat``: stream one answer from the model, no tools.

The smallest proof that the runtime works, and handy in scripts (``--json``).
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
@click.argument("prompt", nargs=-1, required=True)
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

    PROMPT is the question; `-` reads it from standard input.
    """
    from deskmate.app.llm import ChatMessage, Delta, Finished, GenerationParams

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
