"""`deskmate mcp …` as a user runs it, and the import dialects."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest
from conftest import ROOT, TEST_SERVERS, deskmate

from deskmate.tools.hub.dialects import ImportError_, parse_servers
from deskmate.tools.hub.servers import expand


def servers_in(home):
    return tomllib.loads((home / "config.toml").read_text())["mcp"]["servers"]


def test_add_stdio_and_remote_then_remove(home):
    result = deskmate("mcp", "add", "git", "--env", "A=${HOME}", "--", "uvx", "mcp-server-git",
                      "--repository", ".", home=home)
    assert result.returncode == 0, result.stderr
    result = deskmate("mcp", "add", "web", "--url", "https://x.test/mcp", "--header",
                      "Authorization=Bearer ${TOKEN}", home=home)
    assert result.returncode == 0, result.stderr
    servers = servers_in(home)
    assert servers["git"] == {"command": "uvx", "args": ["mcp-server-git", "--repository", "."],
                              "env": {"A": "${HOME}"}}
    assert servers["web"] == {"url": "https://x.test/mcp",
                              "headers": {"Authorization": "Bearer ${TOKEN}"}}
    again = deskmate("mcp", "add", "git", "--", "other", home=home)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert deskmate("mcp", "remove", "git", home=home).returncode == 0
    assert set(servers_in(home)) == {"web"}
    missing = deskmate("mcp", "remove", "git", home=home)
    assert missing.returncode == 1 and "no server named 'git'" in missing.stderr


def test_add_warns_when_the_command_is_not_found_but_keeps_the_server(home, tmp_path):
    result = deskmate("mcp", "add", "ghost", "--", "no-such-mcp-server-xyz", "--flag", home=home)
    assert result.returncode == 0, result.stderr
    assert "command 'no-such-mcp-server-xyz' is not on PATH" in result.stderr
    assert servers_in(home)["ghost"]["command"] == "no-such-mcp-server-xyz"
    found = deskmate("mcp", "add", "py", "--", sys.executable, "-V", home=home)
    assert found.returncode == 0 and "warning" not in found.stderr
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    odd = deskmate("mcp", "add", "local", "--", str(script), home=home)
    assert odd.returncode == 0 and "is not an executable file" in odd.stderr


def test_add_rejects_bad_input(home):
    assert deskmate("mcp", "add", "x", home=home).returncode == 2
    bad = deskmate("mcp", "add", "bad name!", "--", "cmd", home=home)
    assert bad.returncode == 2 and "server name" in bad.stderr
    assert not (home / "config.toml").exists()


@pytest.mark.parametrize("options", [
    ("--header", "A=b", "--", "cmd"), ("--transport", "sse", "--", "cmd"),
    ("--url", "https://x.test/mcp", "--env", "A=b"), ("--url", "https://x.test/mcp", "--cwd", "/"),
])
def test_add_refuses_options_that_do_not_fit_the_server(home, options):
    result = deskmate("mcp", "add", "x", *options, home=home)
    assert result.returncode == 2 and "are for a" in result.stderr, result.stderr
    assert not (home / "config.toml").exists()


def test_default_applies_to_a_set_but_empty_variable():
    env = {"EMPTY": "", "FULL": "x"}
    assert expand("${EMPTY:-d}|${FULL:-d}|${UNSET:-d}|${EMPTY}", env) == "d|x|d|"


def test_urls_are_checked_after_expansion_and_kept_unexpanded(home, tmp_path):
    base = {"MCP_TEST_BASE": "https://x.test"}
    added = deskmate("mcp", "add", "web", "--url", "${MCP_TEST_BASE}/mcp", home=home, env=base)
    assert added.returncode == 0, added.stderr
    assert servers_in(home)["web"] == {"url": "${MCP_TEST_BASE}/mcp"}
    bad = deskmate("mcp", "add", "ftp", "--url", "${MCP_TEST_BASE}/mcp", home=home,
                   env={"MCP_TEST_BASE": "ftp://x.test"})
    assert bad.returncode == 2 and "does not expand to an http(s) URL" in bad.stderr
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps({"mcpServers": {
        "remote": {"type": "http", "url": "${MCP_TEST_BASE}/api"}}}))
    imported = deskmate("mcp", "import", str(source), home=home, env=base)
    assert imported.returncode == 0 and "imported 1" in imported.stdout, imported.stderr
    assert servers_in(home)["remote"] == {"url": "${MCP_TEST_BASE}/api"}


def test_import_claude_desktop_with_dry_run(home, tmp_path):
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/x"]},
        "gh": {"command": "docker", "args": ["run", "gh"], "env": {"TOKEN": "${GH_TOKEN}"},
               "alwaysAllow": ["x"], "weird": 1},
    }}))
    dry = deskmate("mcp", "import", str(source), "--dry-run", home=home)
    assert dry.returncode == 0, dry.stderr
    assert "add  fs" in dry.stdout and "dry run" in dry.stdout
    assert "ignored unknown key 'weird'" in dry.stderr
    assert not (home / "config.toml").exists()
    real = deskmate("mcp", "import", str(source), home=home)
    assert real.returncode == 0 and "imported 2" in real.stdout
    assert servers_in(home)["gh"]["env"] == {"TOKEN": "${GH_TOKEN}"}
    again = deskmate("mcp", "import", str(source), home=home)
    assert "skip" in again.stdout and "imported 0" in again.stdout


def test_import_broken_file(home, tmp_path):
    source = tmp_path / "broken.json"
    source.write_text('{"mcpServers": {"a": ')
    result = deskmate("mcp", "import", str(source), home=home)
    assert result.returncode == 1 and "not valid JSON" in result.stderr


def test_dialects():
    code = parse_servers({"mcpServers": {
        "remote": {"type": "http", "url": "https://a.test/mcp", "headers": {"X": "1"}},
        "old": {"type": "sse", "url": "https://b.test/sse"},
        "local": {"type": "stdio", "command": "node", "args": ["s.js"], "cwd": "/srv"},
    }})
    by = {s.name: s for s in code.servers}
    assert by["remote"].transport == "http" and by["remote"].headers == {"X": "1"}
    assert by["old"].transport == "sse" and by["local"].cwd == "/srv"
    vscode = parse_servers({"servers": {"x": {"type": "stdio", "command": "x"}}, "inputs": []})
    assert vscode.servers[0].command == "x"
    windsurf = parse_servers({"mcpServers": {"w": {"serverUrl": "https://w.test/sse"}}})
    assert windsurf.servers[0].transport == "sse"
    zed = parse_servers({"context_servers": {"z": {"command": {"path": "zz", "args": ["-v"]}}}})
    assert zed.servers[0].command == "zz" and zed.servers[0].args == ("-v",)
    disabled = parse_servers({"mcpServers": {"d": {"command": "d", "disabled": True}}})
    assert disabled.servers[0].enabled is False
    partial = parse_servers({"mcpServers": {"ok": {"command": "a"}, "bad": {"type": "carrier"},
                                            "empty": {}}})
    assert [s.name for s in partial.servers] == ["ok"]
    assert any("bad" in w for w in partial.warnings) and any("empty" in w for w in partial.warnings)
    with pytest.raises(ImportError_):
        parse_servers(["not", "an", "object"])
    unset = parse_servers({"mcpServers": {"u": {"command": "a", "env": {"K": "${NOPE_UNSET}"}}}})
    assert any("NOPE_UNSET is not set" in w for w in unset.warnings)


def test_dialect_keys_are_mapped_or_warned_about(tmp_path):
    (tmp_path / "plain.env").write_text("# comment\nREGION=eu\nGIVEN=from-file\n")
    (tmp_path / "fancy.env").write_text("export TOKEN=$(pass show x)\n")
    result = parse_servers({"inputs": [{"id": "key"}], "mcpServers": {
        "a": {"command": "a", "envFile": "plain.env", "env": {"GIVEN": "explicit"},
              "timeout": 30000, "alwaysAllow": ["x"], "autoApprove": ["y"]},
        "b": {"command": "b", "envFile": "fancy.env"},
        "c": {"command": "c", "envFile": "missing.env"},
    }}, base_dir=tmp_path)
    by = {s.name: s for s in result.servers}
    assert by["a"].env == {"REGION": "eu", "GIVEN": "explicit"}
    assert by["a"].call_timeout == 30.0
    assert by["b"].env == {} and by["c"].env == {}
    warnings = "\n".join(result.warnings)
    for expected in ("a: alwaysAllow not imported", "a: autoApprove not imported",
                     "inputs not imported", "b: envFile", "line 1 is not a plain KEY=VALUE",
                     "c: envFile missing.env not imported"):
        assert expected in warnings, warnings


@pytest.mark.slow
def test_list_and_test_connect_for_real(home):
    toy = str(TEST_SERVERS / "toy.py")
    broken = str(TEST_SERVERS / "exits_at_start.py")
    assert deskmate("mcp", "add", "toy", "--", sys.executable, toy, home=home).returncode == 0
    assert deskmate("mcp", "add", "broken", "--", sys.executable, broken,
                    home=home).returncode == 0
    listing = deskmate("mcp", "list", "--json", home=home)
    assert listing.returncode == 0, listing.stderr
    rows = {r["name"]: r for r in json.loads(listing.stdout)}
    assert rows["toy"]["status"] == "ready" and rows["toy"]["tools"] == 5
    assert rows["broken"]["status"] == "failed" and "missing API key" in rows["broken"]["error"]
    ok = deskmate("mcp", "test", "toy", home=home)
    assert ok.returncode == 0 and "5 tools: echo, add" in ok.stdout
    bad = deskmate("mcp", "test", "broken", home=home)
    assert bad.returncode == 1 and "exited before completing the MCP handshake" in bad.stderr
    logs = deskmate("mcp", "logs", "broken", home=home)
    assert "missing API key" in logs.stdout
    assert deskmate("mcp", "disable", "broken", home=home).returncode == 0
    rows = {r["name"]: r for r in json.loads(
        deskmate("mcp", "list", "--json", home=home).stdout)}
    assert rows["broken"]["status"] == "disabled"


def test_mcp_config_flag_replaces_the_servers_for_one_run(home, tmp_path):
    deskmate("mcp", "add", "kept", "--", "cmd", home=home)
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    env = {**os.environ, "DESKMATE_HOME": str(home)}
    result = subprocess.run([sys.executable, "-m", "deskmate.app.cli", "--mcp-config", str(source),
                             "mcp", "list", "--offline", "--json"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [row["name"] for row in json.loads(result.stdout)] == ["other"]
    assert set(servers_in(home)) == {"kept"}  # the config file is untouched


def test_readme_examples_keep_secrets_out_of_the_config_and_document_tools():
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("deskmate ")]
    # In double quotes the shell expands ${VAR} before deskmate sees it.
    expanded_by_shell = [c for c in commands if re.search(r'"[^"\']*\$\{', c)]
    assert not expanded_by_shell
    from deskmate.app.cli.tools import tools

    for name in tools.commands:
        assert any(c.startswith(f"deskmate tools {name} ") for c in commands), name
