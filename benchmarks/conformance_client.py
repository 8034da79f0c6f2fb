"""The MCP conformance suite's client under test: deskmate's real client stack.

    python benchmarks/conformance_client.py SERVER_URL

The suite (``benchmarks/mcp_conformance.py`` runs it) starts a test server per scenario
and runs this with the server's URL last, the scenario in ``MCP_CONFORMANCE_SCENARIO``
and, for some, a JSON ``MCP_CONFORMANCE_CONTEXT`` (pre-registered client credentials).

What a person would do with the app, with the person replaced by headless answers:
the server configured as an HTTP server (a pre-registered client as ``client_id`` and
``client_secret_env``, as a user writes it), one ``Hub`` with the OAuth setup the app
uses, sign-ins answered by following the authorization redirect to our loopback
listener (``headless_answer``), elicitations accepted with their defaults
(``AcceptDefaults``). Then connect (initialize, list) and call every tool it lists with
arguments made from its schema. Exit 0 when every call got a result.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECRET_ENV = "CONFORMANCE_CLIENT_SECRET"
# What the suite's own clients give as their Client ID Metadata Document (auth/basic-cimd).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def server_table(url: str, context: dict[str, Any]) -> dict[str, Any]:
    """The server's config table, as a user would write it for this server."""
    table: dict[str, Any] = {"url": url, "startup_timeout": 20.0, "call_timeout": 20.0,
                             "client_metadata_url": CIMD_URL}
    if context.get("client_id"):
        table["client_id"] = context["client_id"]
        if context.get("client_secret"):
            os.environ[SECRET_ENV] = context["client_secret"]
            table["client_secret_env"] = SECRET_ENV
    return table


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: each required property's default, else a plain value."""
    simple = {"integer": 1, "number": 1, "boolean": True, "string": "test", "array": [],
              "object": {}}
    props = schema.get("properties") or {}
    out = {}
    for name in schema.get("required") or []:
        prop = props.get(name) or {}
        out[name] = prop["default"] if "default" in prop else simple.get(prop.get("type"), "test")
    return out


def main(url: str) -> int:
    from deskmate.tools.hub import Hub, ToolCallError, server_from_table
    from deskmate.tools.hub.elicitation import AcceptDefaults
    from deskmate.tools.hub.oauth import OAuthSetup, headless_answer

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    config = server_from_table("conformance", server_table(url, context))
    work = Path(tempfile.mkdtemp(prefix="deskmate-conformance-"))
    oauth = OAuthSetup(work / "tokens", answer=headless_answer)
    failures = 0
    with Hub([config], work / "logs", asker=AcceptDefaults(), oauth=oauth) as hub:
        state = hub.start()[0]
        print(f"{scenario}: {state.status} {state.error}", file=sys.stderr)
        if state.status != "ready":
            return 1
        for tool in state.tools:
            try:
                result = hub.call("conformance", tool.name, arguments(tool.input_schema))
                print(f"{tool.name}: {result.text[:200]}", file=sys.stderr)
            except ToolCallError as exc:
                failures += 1
                print(f"{tool.name}: {exc}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[-1]))
