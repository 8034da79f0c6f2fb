"""``deskmate tools``: search the toolspace and read a tool's signature.

The catalog is the configured MCP servers (started for the command, then stopped), or
with ``--catalog DIR`` a folder of recorded ``tools/list`` snapshots.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from deskmate.app.cli.common import EXIT_FAILURE, EXIT_USAGE, Env, fail

if TYPE_CHECKING:
    from deskmate.tools.catalog import Catalog
    from deskmate.tools.search import ToolSearch

CATALOG_HELP = ("Folder of recorded tools/list snapshots (one JSON file per server) "
                "instead of the configured MCP servers.")


@click.group("tools")
def tools() -> None:
    """Search and inspect the tools of your MCP servers."""


@tools.command("search")
@click.argument("query", required=False)
@click.option("--k", "k", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many tools to return.")
@click.option("--server", help="Only this server's tools.")
@click.option("--catalog", "catalog_dir", type=click.Path(path_type=Path), help=CATALOG_HELP)
@click.option("--queries", type=click.File("r", encoding="utf-8"),
              help="File with one query per line (- for standard input); prints one JSON "
                   "list per line, in order.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of "
              '{"server", "tool", "score"}.')
@click.option("--dense/--no-dense", default=None,
              help="Blend in the embedding model (default: when the search extra is installed).")
@click.pass_obj
def search(env: Env, query: str | None, k: int, server: str | None, catalog_dir: Path | None,
           queries: IO[str] | None, as_json: bool, dense: bool | None) -> None:
    """Find the tools that fit QUERY, a goal in your own words."""
    if (query is None) == (queries is None):
        fail("give either a QUERY or --queries FILE", EXIT_USAGE)
    catalog = _catalog(env, catalog_dir)
    if server is not None and server not in catalog:
        fail(f"no server {server!r} in the catalog; servers: "
             + ", ".join(info.name for info in catalog.servers()), EXIT_USAGE)
    searcher = _searcher(catalog, dense)
    if queries is not None:
        for line in queries:
            hits = searcher.search(line.strip(), k=k, server=server) if line.strip() else []
            click.echo(json.dumps([dataclasses.asdict(hit) for hit in hits]))
        return
    assert query is not None
    hits = searcher.search(query, k=k, server=server)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(hit) for hit in hits]))
        return
    if not hits:
        click.echo("No tool matches. Try other words, or drop --server.")
        return
    from deskmate.tools.signatures import summary_line

    for hit in hits:
        summary = summary_line(catalog.get(hit.server, hit.tool).description)
        click.echo(f"{hit.score:8.3f}  {hit.server} {hit.tool}" + (f" — {summary}" if summary
                                                                   else ""))


@tools.command("show")
@click.argument("server")
@click.argument("tool")
@click.option("--catalog", "catalog_dir", type=click.Path(path_type=Path), help=CATALOG_HELP)
@click.pass_obj
def show(env: Env, server: str, tool: str, catalog_dir: Path | None) -> None:
    """Print the Python signature and docstring the model sees for SERVER's TOOL."""
    from deskmate.tools.catalog import CatalogError
    from deskmate.tools.signatures import signature

    catalog = _catalog(env, catalog_dir)
    try:
        spec = catalog.get(server, tool)
    except CatalogError as exc:
        fail(str(exc), EXIT_USAGE)
    click.echo(signature(spec).text())


def _catalog(env: Env, catalog_dir: Path | None) -> Catalog:
    from deskmate.tools.catalog import Catalog, CatalogError

    if catalog_dir is not None:
        try:
            return Catalog.from_snapshots(catalog_dir)
        except CatalogError as exc:
            fail(str(exc), EXIT_USAGE)
    if not env.config.mcp.servers:
        fail("no MCP servers are configured: add one with `deskmate mcp add NAME -- CMD`, "
             "or search recorded snapshots with --catalog DIR", EXIT_USAGE)
    from deskmate.app.toolspace import open_hub
    from deskmate.tools.hub.status import not_ready

    hub = open_hub(env.config)
    try:
        for state in hub.start():
            if state.status != "ready":
                click.echo(f"warning: {not_ready(state)}", err=True)
        specs = hub.tools()
    finally:
        hub.close()
    if not specs:
        fail("none of the configured MCP servers offered any tool (see "
             "`deskmate mcp list`)", EXIT_FAILURE)
    return Catalog.from_specs(specs)


def _searcher(catalog: Catalog, dense: bool | None) -> ToolSearch:
    from deskmate.app import paths
    from deskmate.tools.search import DenseUnavailable, open_search

    try:
        return open_search(catalog, paths.embeddings_cache(), dense=dense)
    except DenseUnavailable as exc:
        fail(str(exc), EXIT_FAILURE)
