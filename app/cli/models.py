"""``deskmate models``: the registry, downloads, and which model is active."""

from __future__ import annotations

import json

import click

from deskmate.app.cli.common import Env, fail


@click.group(invoke_without_command=True)
@click.pass_context
def models(ctx: click.Context) -> None:
    """List known models; pull, inspect and choose one."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_models)


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_obj
def list_models(env: Env, as_json: bool) -> None:
    """Show the registry and which models are on this machine."""
    from deskmate.app.services.machine import machine_fit
    from deskmate.app.services.models import known_models

    active = env.config.model.name
    fit = machine_fit()
    rows = []
    for model in known_models(active):
        rows.append({"name": model.name, "description": model.description,
                     "size_mb": model.size_mb, "path": str(model.path) if model.path else None,
                     "active": model.active, "recommended": model.recommended,
                     "best_here": model.name == fit.recommended,
                     "source": model.source, "train": model.train})
    if active and active not in {r["name"] for r in rows}:
        rows.append({"name": active, "description": "(from the config)", "size_mb": None,
                     "path": active, "active": True, "recommended": False,
                     "best_here": False, "source": active, "train": ""})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        mark = "*" if r["active"] else " "
        state = "ready" if r["path"] else f"{r['size_mb']:,} MB to pull" if r["size_mb"] else ""
        click.echo(f"{mark} {r['name']:<{width}}  {state:<16}  {r['description']}")
    click.echo("\n* active model.  `deskmate models pull NAME` downloads, "
               "`deskmate models use NAME|PATH` activates.")
    click.echo(fit.summary())
    if not active:
        click.echo("No model is active yet.")


@models.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a line.")
def fit(as_json: bool) -> None:
    """Say which llama.cpp build this is and which model fits this machine."""
    from dataclasses import asdict

    from deskmate.app.services.machine import machine_fit

    found = machine_fit()
    click.echo(json.dumps(asdict(found), indent=2) if as_json else found.summary())


@models.command()
@click.argument("spec")
def pull(spec: str) -> None:
    """Download a model (registry name or hf:OWNER/REPO/FILE.gguf) and verify it."""
    from deskmate.app.llm.download import pull as do_pull
    from deskmate.app.llm.registry import parse_model_spec

    source = parse_model_spec(spec)
    if source.is_remote:
        click.echo(f"pulling {source.file} from {source.repo} …", err=True)
    try:
        path = do_pull(spec)
    except KeyboardInterrupt:
        fail("download interrupted; run the same command again to resume it", 130)
    click.echo(str(path))


@models.command()
@click.argument("spec")
@click.pass_obj
def use(env: Env, spec: str) -> None:
    """Make SPEC (registry name, hf:…, or a .gguf path) the model deskmate runs."""
    from deskmate.app.services.models import use_model

    chosen = use_model(spec, env.config_path)
    if not chosen.downloaded:
        click.echo(f"note: {spec} is not downloaded yet; it will be pulled on first use "
                   f"(or run `deskmate models pull {spec}` now)", err=True)
    click.echo(f"active model: {chosen.value}")


@models.command()
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(spec: str, as_json: bool) -> None:
    """Show what a model file says about itself (architecture, context, template)."""
    from deskmate.app.llm.base import ModelError
    from deskmate.app.llm.gguf_file import GGUFError, inspect_gguf
    from deskmate.app.llm.registry import resolve_model

    try:
        gguf = inspect_gguf(resolve_model(spec))
    except GGUFError as exc:
        raise ModelError(str(exc)) from exc
    facts = {
        "path": str(gguf.path), "name": gguf.name, "architecture": gguf.architecture,
        "type": gguf.file_type, "size_mb": round(gguf.size / 1e6, 1),
        "context_length": gguf.context_length, "tensors": gguf.tensor_count,
        "chat_template": bool(gguf.chat_template), "gguf_version": gguf.version,
    }
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    for key, value in facts.items():
        click.echo(f"{key:>15}: {value}")
    if not gguf.chat_template:
        click.echo("note: no chat template in the file; deskmate will use ChatML")
