"""The tool catalog: recorded snapshots, live specs, lookups and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskmate.tools.catalog import Catalog, CatalogError
from deskmate.tools.spec import ToolSpec

TOOLSPACE = Path(__file__).resolve().parents[1].parent / "shared" / "toolspace"
needs_toolspace = pytest.mark.skipif(not TOOLSPACE.exists(), reason="shared/toolspace absent")


def write(folder: Path, name: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def snapshot(server: str, *names: str, **extra: object) -> dict:
    return {"server": server, **extra,
            "tools": [{"name": n, "description": f"Does {n}.",
                       "inputSchema": {"type": "object", "properties": {}}} for n in names]}


@needs_toolspace
def test_real_toolspace_loads_every_server_and_tool():
    catalog = Catalog.from_snapshots(TOOLSPACE)
    servers = catalog.servers()
    files = sorted(TOOLSPACE.glob("*.json"))
    assert len(servers) == len(files)
    assert sum(s.tool_count for s in servers) == len(catalog) == len(list(catalog))
    expected = sum(len(json.loads(f.read_text())["tools"]) for f in files)
    assert len(catalog) == expected
    git = catalog.get("mcp-server-git", "git_status")
    assert git.server == "mcp-server-git" and git.input_schema["type"] == "object"
    assert catalog.server("mcp-server-git").tool_count == 12
    excel = catalog.server("excel-mcp-server")
    assert excel.summary == "Create, read and edit Excel workbooks without Microsoft Excel."
    assert catalog.server("@brave/brave-search-mcp-server").summary == "Brave Search MCP Server"


def test_snapshot_folder_keeps_file_order_and_tool_order(tmp_path):
    write(tmp_path, "b.json", snapshot("beta", "z_tool", "a_tool"))
    write(tmp_path, "a.json", snapshot("alpha", "one", instructions="Alpha does things.\nMore."))
    write(tmp_path, "notes.txt", "not a snapshot")
    catalog = Catalog.from_snapshots(tmp_path)
    assert [s.name for s in catalog.servers()] == ["alpha", "beta"]
    assert [t.name for t in catalog.tools("beta")] == ["z_tool", "a_tool"]
    assert catalog.server("alpha").summary == "Alpha does things."
    assert catalog.server("beta").summary == ""


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not a readable JSON snapshot"),
    ({"tools": []}, 'a "server" name and a "tools" list'),
    ({"server": "s", "tools": {"a": 1}}, 'a "server" name and a "tools" list'),
    ({"server": "s", "tools": [{"description": "nameless"}]}, 'tools[0] has no "name"'),
    ({"server": "s", "tools": [{"name": "t", "inputSchema": "oops"}]}, "not an object"),
    ({"server": "s", "tools": [{"name": "t"}, {"name": "t"}]}, "lists the tool 't' twice"),
])
def test_bad_snapshot_names_the_file(tmp_path, content, message):
    write(tmp_path, "good.json", snapshot("good", "ok"))
    bad = write(tmp_path, "broken.json", content)
    with pytest.raises(CatalogError) as err:
        Catalog.from_snapshots(tmp_path)
    assert message in str(err.value)
    if "twice" not in message:
        assert str(bad) in str(err.value)


def test_same_server_in_two_files_is_an_error(tmp_path):
    write(tmp_path, "a.json", snapshot("dup", "x"))
    write(tmp_path, "b.json", snapshot("dup", "y"))
    with pytest.raises(CatalogError, match=r"b.json: server 'dup' is also recorded"):
        Catalog.from_snapshots(tmp_path)


def test_missing_or_empty_folder(tmp_path):
    with pytest.raises(CatalogError, match="does not exist"):
        Catalog.from_snapshots(tmp_path / "nope")
    with pytest.raises(CatalogError, match=r"no \.json snapshot files"):
        Catalog.from_snapshots(tmp_path)


def live() -> Catalog:
    return Catalog.from_specs(
        [ToolSpec("git", "git_status", "Shows the working tree status"),
         ToolSpec("time", "get_current_time"), ToolSpec("git", "git_log")],
        summaries={"git": "Git repositories.  Local only.", "idle": "No tools yet"})


def test_from_specs_groups_by_server_in_first_seen_order():
    catalog = live()
    assert [(s.name, s.tool_count, s.summary) for s in catalog.servers()] == [
        ("git", 2, "Git repositories."), ("time", 1, ""), ("idle", 0, "No tools yet")]
    assert [(t.server, t.name) for t in catalog] == [
        ("git", "git_status"), ("git", "git_log"), ("time", "get_current_time")]
    assert catalog.tools("idle") == []
    assert ("git", "git_log") in catalog and "time" in catalog
    assert ("git", "get_current_time") not in catalog and "nope" not in catalog


def test_lookups_that_miss_suggest_names():
    catalog = live()
    with pytest.raises(CatalogError, match=r"no tool 'git_stat'.*did you mean 'git_status'"):
        catalog.get("git", "git_stat")
    with pytest.raises(CatalogError, match=r"no server 'gti'.*did you mean 'git'"):
        catalog.get("gti", "git_status")
    with pytest.raises(CatalogError, match=r"no server 'zzz' in the catalog$"):
        catalog.tools("zzz")


def test_duplicate_live_tool_is_an_error():
    with pytest.raises(CatalogError, match="twice"):
        Catalog.from_specs([ToolSpec("s", "t"), ToolSpec("s", "t")])


def test_first_keeps_the_first_tools_and_their_servers():
    sub = live().first(2)
    assert [(t.server, t.name) for t in sub] == [("git", "git_status"), ("git", "git_log")]
    assert [s.name for s in sub.servers()] == ["git"]
    assert sub.server("git").summary == "Git repositories."
    assert len(live().first(0)) == 0



def test_scaled_copies_servers_under_new_names_past_the_end():
    catalog = Catalog.from_specs([ToolSpec("git", "status"), ToolSpec("git", "log"),
                                  ToolSpec("time", "now")], summaries={"git": "Git repos"})
    assert [t.name for t in catalog.scaled(2)] == ["status", "log"]
    big = catalog.scaled(8)
    assert len(big) == 8
    assert [s.name for s in big.servers()] == ["git", "time", "git-2", "time-2", "git-3"]
    assert big.server("git-2").summary == "Git repos" and big.server("git-3").tool_count == 2
    assert big.get("time-2", "now").name == "now"
    assert catalog.scaled(8).servers() == big.servers()  # deterministic
