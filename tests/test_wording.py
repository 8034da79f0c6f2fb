"""Sentences users read in several places are made in one place, and read well."""

from __future__ import annotations

from deskmate.app.ui.workers import failure_title
from deskmate.tools.hub.connection import ServerState
from deskmate.tools.hub.status import not_ready


def test_a_server_that_is_not_ready_is_named_with_its_reason():
    failed = ServerState("ghost", "failed", error="command not found: ghostd\nmore lines")
    assert not_ready(failed) == "MCP server ghost failed: command not found: ghostd"
    assert not_ready(failed, limit=7) == "MCP server ghost failed: command"
    assert not_ready(ServerState("notes", "disabled")) == "MCP server notes is disabled"
    hint = "run `deskmate mcp login docs`"
    assert not_ready(ServerState("docs", "needs-sign-in", error=hint)) == \
        f"MCP server docs needs sign-in: {hint}"


def test_a_failed_workers_toast_says_which_job_failed():
    assert failure_title("load_model") == "Load model failed"
    assert failure_title("_start_hub") == "Start hub failed"
    assert failure_title("") == "Something failed"
