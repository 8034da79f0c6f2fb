"""The host side of the tool channel on a plain catalog: names and search for small models."""

from __future__ import annotations

import pytest

from deskmate.app.agent.bridge import BridgeError, CallContext, ToolBridge
from deskmate.app.agent.value_hints import value_hint
from deskmate.tools.catalog import Catalog
from deskmate.tools.policy import Policy
from deskmate.tools.spec import ToolSpec


def test_a_tool_named_after_its_server_is_found_without_the_prefix():
    # git.log means git.git_log: many servers prefix their tools with their own name.
    schema = {"type": "object", "properties": {"repo_path": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("git", "git_log", "", schema),
                                  ToolSpec("git", "git_status", "", schema)])
    bridge = ToolBridge(catalog, lambda *args, **kwargs: None, Policy(yes_all=True))
    assert bridge._tool("git", "log")[0].name == "git_log"
    assert bridge._tool("git", "git_status")[0].name == "git_status"
    with pytest.raises(BridgeError, match="has no tool 'diff'"):
        bridge._tool("git", "diff")


def test_a_tool_called_on_the_wrong_server_names_its_own():
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("git", "git_log", "", schema),
                                  ToolSpec("filesystem", "edit_file", "", schema)])
    bridge = ToolBridge(catalog, lambda *args, **kwargs: None, Policy(yes_all=True))
    with pytest.raises(BridgeError) as caught:
        bridge._tool("git", "edit_file")
    assert str(caught.value) == ("git has no tool 'edit_file': edit_file is a tool of another "
                                 "server; call it as filesystem.edit_file(path: str | None "
                                 "= None)")


def test_a_request_for_information_gets_read_only_tools_first():
    def tool(name, description, read_only):
        return ToolSpec("git", name, description, {"type": "object"},
                        annotations={"readOnlyHint": read_only})

    catalog = Catalog.from_specs([tool("git_commit", "Record a commit: commit the changes", False),
                                  tool("git_log", "Show the commit logs", True)])
    bridge = ToolBridge(catalog, lambda *args, **kwargs: None, Policy(yes_all=True))
    query = "the most recent commit commit"
    assert bridge.search_tools(query, 1)[0].startswith("git.git_commit(")
    assert bridge.search_tools(query, 1, reading=True)[0].startswith("git.git_log(")


def test_a_file_servers_path_error_names_the_next_call():
    from deskmate.tools.hub.results import ContentItem, ToolResult

    schema = {"type": "object", "properties": {"path": {"type": "string"}},
              "required": ["path"]}
    catalog = Catalog.from_specs([ToolSpec("filesystem", name, "", schema) for name in
                                  ("search_files", "read_text_file", "list_directory")])
    errors = {"/a/users.json": "ENOTDIR: not a directory, scandir '/a/users.json'",
              "/a/gone": "ENOENT: no such file or directory, scandir '/a/gone'",
              "/a/x": "permission denied",
              "A": "ENOENT: no such file or directory, scandir '/a/A'",
              "/e/gone": "ENOENT: no such file or directory, scandir '/e/gone'"}

    listed = []

    def call(server, tool, arguments, cancel=None, hooks=None):
        if tool == "list_directory" and arguments["path"] == "/a":
            listed.append(arguments["path"])
            return ToolResult(server, tool, (ContentItem("text", text="[FILE] users.json"),))
        if tool == "list_directory" and arguments["path"] == "/e":
            return ToolResult(server, tool, (ContentItem("text", text=""),))
        return ToolResult(server, tool, (ContentItem("text", text=errors[arguments["path"]]),),
                          is_error=True)

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("filesystem", "search_files", [], {"path": "/a/users.json"})
    assert str(caught.value).endswith(
        "Hint: that path is a file, not a folder; read it with "
        "filesystem.read_text_file(path: str)")
    # "No such file": the folder above the path, listed with the server's own tool.
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("filesystem", "search_files", [], {"path": "/a/gone"})
    assert str(caught.value).endswith(
        "its folder holds with filesystem.list_directory(path: str)\n/a holds:\n"
        "[FILE] users.json")
    assert listed == ["/a"] and bridge.turn.calls == 3
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("filesystem", "search_files", [], {"path": "/a/x"})
    assert "Hint" not in str(caught.value)
    # A one-character path: a loop that went over a text character by character.
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("filesystem", "list_directory", [], {"path": "A"})
    assert "its folder holds" in str(caught.value) and str(caught.value).endswith(
        "Hint: path='A' is a single character. A for loop over a str goes character by "
        "character; for a text's lines use .splitlines().")
    # An empty folder says so: an empty "holds:" read as a listing still to come.
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("filesystem", "search_files", [], {"path": "/e/gone"})
    assert str(caught.value).endswith("\n/e is empty: it holds no files or folders.")


def test_a_tool_that_fails_shows_its_documentation_once_a_turn():
    from deskmate.tools.hub.results import ContentItem, ToolResult

    schema = {"type": "object", "required": ["timezone"], "properties": {"timezone": {
        "type": "string", "description": "IANA timezone name (e.g. 'America/New_York')"}}}
    catalog = Catalog.from_specs([ToolSpec("time", "get_current_time", "Current time.", schema)])

    def call(server, tool, arguments, cancel=None, hooks=None):
        return ToolResult(server, tool, (ContentItem("text", text="Invalid timezone"),),
                          is_error=True)

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    errors = []
    for _ in range(2):
        with pytest.raises(BridgeError) as caught:
            bridge.call_tool("time", "get_current_time", [], {"timezone": "New York"})
        errors.append(str(caught.value))
    assert "e.g. 'America/New_York'" in errors[0] and "documentation" not in errors[1]
    bridge.new_turn()
    with pytest.raises(BridgeError, match="documentation"):
        bridge.call_tool("time", "get_current_time", [], {"timezone": "Paris"})


def test_staging_a_name_the_repository_lacks_names_the_one_it_holds():
    """The model wrote LICENSE, then staged LICENSE.txt: the folder's listing (with the
    file server's tool) gives the name it wrote."""
    from deskmate.tools.hub.results import ContentItem, ToolResult

    def schema(*names):
        return {"type": "object", "required": list(names),
                "properties": {n: {"type": "string"} for n in names}}

    specs = [ToolSpec("git", "git_add", "", schema("repo_path", "files")),
             ToolSpec("filesystem", "write_file", "", schema("path", "content")),
             ToolSpec("filesystem", "list_directory", "", schema("path"))]
    listed = []

    def call(server, tool, arguments, cancel=None, hooks=None):
        if tool == "list_directory":
            listed.append(arguments["path"])
            return ToolResult(server, tool, (ContentItem("text", text="[DIR] .git\n"
                                                         "[FILE] LICENSE\n[FILE] main.py"),))
        name = arguments["files"]
        error = f"  stderr: 'fatal: pathspec '{name}' did not match any files'"
        return ToolResult(server, tool, (ContentItem("text", text=error),), is_error=True)

    bridge = ToolBridge(Catalog.from_specs(specs), call, Policy(yes_all=True))
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("git", "git_add", [], {"repo_path": "/r/", "files": "LICENSE.txt"})
    assert str(caught.value).endswith(
        "Hint: the repository's folder holds 'LICENSE': stage that name with "
        "git.git_add(repo_path='/r/', files='LICENSE'), or write the file first with "
        "filesystem.write_file(path: str, content: str).")
    assert listed == ["/r"]
    # Nothing like it there: the file is still to be written.
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("git", "git_add", [], {"repo_path": "/r", "files": "CHANGELOG.md"})
    write_first = ("Hint: that file is not in the folder yet: write it first with "
                   "filesystem.write_file(path: str, content: str), then add it.")
    assert str(caught.value).endswith(write_first)
    # No server lists folders: the hint to write the file first all the same.
    bridge = ToolBridge(Catalog.from_specs(specs[:2]), call, Policy(yes_all=True))
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("git", "git_add", [], {"repo_path": "/r", "files": "LICENSE"})
    assert str(caught.value).endswith(write_first) and listed == ["/r", "/r"]


def test_the_head_start_search_gives_each_matching_server_its_best_tool():
    from deskmate.tools.search import Hit

    catalog = Catalog.from_specs([ToolSpec("filesystem", f"write_{n}") for n in range(4)]
                                 + [ToolSpec("fetch", "fetch"), ToolSpec("git", "git_log")])

    class Ranked:  # the search's order, fixed
        def search(self, query, k=5, server=None):
            return [Hit("filesystem", f"write_{n}", 1.0 - n / 10) for n in range(4)] + [
                Hit("fetch", "fetch", 0.55), Hit("git", "git_log", 0.2)][:k]

    bridge = ToolBridge(catalog, lambda *args, **kwargs: None, Policy(yes_all=True),
                        search=Ranked())
    tools = [line.split("(")[0] for line in bridge.search_tools("q", 3)]
    assert tools == ["filesystem.write_0", "filesystem.write_1", "filesystem.write_2"]
    # fetch scores over half the best: its best tool comes up; git's (0.2) does not.
    tools = [line.split("(")[0] for line in bridge.search_tools("q", 3, servers=True)]
    assert tools == ["filesystem.write_0", "fetch.fetch", "filesystem.write_1"]


def test_a_web_address_given_as_a_path_is_refused_with_where_pages_come_from():
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    url = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
    catalog = Catalog.from_specs([ToolSpec("filesystem", "list_directory", "", schema),
                                  ToolSpec("fetch", "fetch", "", url)])
    calls = []
    bridge = ToolBridge(catalog, lambda *args, **kwargs: calls.append(args), Policy(yes_all=True))
    with pytest.raises(BridgeError, match=r"'path' takes a path, and 'http://h/p.html' is a web "
                                          r"address: get web pages with fetch\.fetch\(url: str\)"):
        bridge.call_tool("filesystem", "list_directory", [], {"path": "http://h/p.html"})
    with pytest.raises(BridgeError, match="web address"):  # eager mode's calls too
        bridge.call_json("filesystem", "list_directory", {"path": "https://h/"})
    assert calls == [] and bridge.turn.calls == 0



def test_a_refused_value_gets_the_call_written_as_the_documentations_examples():
    """'New York' for an IANA name: the hint rewrites every value that an example of its
    parameter (or of the server's parameter sharing a word of its name) holds."""
    from deskmate.tools.hub.results import ContentItem, ToolResult

    def zone(description):
        return {"type": "string", "description": description}

    convert = {"type": "object", "required": ["source_timezone", "time", "target_timezone"],
               "properties": {
                   "source_timezone": zone("Source IANA timezone name (e.g., "
                                           "'America/New_York', 'Europe/London')."),
                   "time": {"type": "string", "description": "Time in 24-hour format (HH:MM)"},
                   "target_timezone": zone("Target IANA timezone name (e.g., 'Asia/Tokyo', "
                                           "'America/San_Francisco').")}}
    current = {"type": "object", "required": ["timezone"], "properties": {
        "timezone": zone("IANA timezone name (e.g., 'America/New_York', 'Europe/London').")}}
    catalog = Catalog.from_specs([ToolSpec("time", "convert_time", "Convert.", convert),
                                  ToolSpec("time", "get_current_time", "Now.", current)])

    def call(server, tool, arguments, cancel=None, hooks=None):
        bad = next(v for v in arguments.values() if "/" not in v and ":" not in v)
        text = f"Error executing tool: Invalid timezone: 'No time zone found with key {bad}'"
        return ToolResult(server, tool, (ContentItem("text", text=text),), is_error=True)

    def hint(tool, arguments):
        """The hint after the error (value_hints.value_hint), as the bridge would add it
        had it not run the call it writes (``repair``)."""
        spec, sig = bridge.tools()[("time", tool)]
        error = call("time", tool, arguments).text
        return value_hint(bridge.tools(), "time", spec, sig, arguments, error)

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    assert hint("convert_time", {
        "source_timezone": "New York", "time": "09:30", "target_timezone": "Tokyo"}).endswith(
        "Hint: source_timezone='New York' is not written the way the documentation's "
        "examples are; likely meant: time.convert_time(source_timezone='America/New_York', "
        "time='09:30', target_timezone='Asia/Tokyo')")
    # get_current_time's own examples lack Tokyo; convert_time's target_timezone has it.
    assert hint("get_current_time", {"timezone": "tokyo"}).endswith(
        "time.get_current_time(timezone='Asia/Tokyo')")
    # Examples that are IANA zones stand for every zone Python knows.
    assert hint("convert_time", {
        "source_timezone": "London", "time": "16:00", "target_timezone": "Los Angeles"}
    ).endswith("likely meant: time.convert_time(source_timezone='Europe/London', "
               "time='16:00', target_timezone='America/Los_Angeles')")
    # Nothing fits: the examples' form, after the error (no call to run in its place).
    with pytest.raises(BridgeError) as caught:
        bridge.call_tool("time", "get_current_time", [], {"timezone": "Mars"})
    assert str(caught.value).endswith(
        "Hint: timezone='Mars' was refused; write it in the form of the documentation's "
        "examples: 'America/New_York', 'Europe/London', 'Asia/Tokyo'")


def test_a_refused_call_that_a_hint_writes_whole_runs_as_written():
    """The call the hint writes runs in the refused one's place: the code gets its
    result and a note of what changed; when it fails too, both errors are raised."""
    from deskmate.tools.hub.results import ContentItem, ToolResult

    current = {"type": "object", "required": ["timezone"], "properties": {"timezone": {
        "type": "string",
        "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London')."}}}
    catalog = Catalog.from_specs([ToolSpec("time", "get_current_time", "Now.", current)])
    seen = []

    def call(server, tool, arguments, cancel=None, hooks=None):
        seen.append(arguments["timezone"])
        zone = arguments["timezone"]
        if zone == "Europe/London" and len(seen) < 3:
            return ToolResult(server, tool, (ContentItem("text", text='{"hour": 9}'),))
        text = f"Invalid timezone: 'No time zone found with key {zone}'"
        return ToolResult(server, tool, (ContentItem("text", text=text),), is_error=True)

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    assert bridge.call_tool("time", "get_current_time", [], {"timezone": "london"}) == {
        "hour": 9}
    assert seen == ["london", "Europe/London"] and bridge.turn.calls == 2
    assert bridge.turn.returned[-1].repaired == (
        "Note: timezone='london' was refused (Invalid timezone: 'No time zone found with key "
        "london'); it is not written the way the documentation's examples are. "
        "time.get_current_time(timezone='Europe/London') ran in its place, and the code went "
        "on with its result.")
    with pytest.raises(BridgeError) as caught:  # the server now refuses London too
        bridge.call_tool("time", "get_current_time", [], {"timezone": "London"})
    assert seen[2:] == ["London", "Europe/London"]
    assert str(caught.value).startswith(
        "time.get_current_time failed: Invalid timezone: 'No time zone found with key London'"
        "\nRun again as time.get_current_time(timezone='Europe/London') (timezone='London' is "
        "not written the way the documentation's examples are), it failed too: "
        "time.get_current_time failed: Invalid timezone: 'No time zone found with key "
        "Europe/London'")


def test_a_value_refused_for_what_it_names_gets_no_examples():
    """A branch that already exists was not refused for its form, and a branch's name
    is not a branch's type (git_branch's 'local', 'remote', 'all')."""
    from deskmate.tools.hub.results import ContentItem, ToolResult

    kinds = {"type": "object", "properties": {"branch_type": {
        "type": "string", "description": "Can also be 'local', 'remote' or 'all'"}}}
    create = {"type": "object", "properties": {"branch_name": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("git", "git_branch", "", kinds),
                                  ToolSpec("git", "git_create_branch", "", create)])
    errors = {"0.2.0": "Cannot create branch '0.2.0': refs/heads/0.2.0 already exists",
              "a b": "'a b' is not a valid branch name"}

    def call(server, tool, arguments, cancel=None, hooks=None):
        text = errors[arguments["branch_name"]]
        return ToolResult(server, tool, (ContentItem("text", text=text),), is_error=True)

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    for name in errors:
        with pytest.raises(BridgeError) as caught:
            bridge.call_tool("git", "git_create_branch", [], {"branch_name": name})
        assert "Hint" not in str(caught.value)


def test_a_search_with_a_sentence_that_found_nothing_says_to_try_a_word():
    from deskmate.app.agent.empty_result import empty
    from deskmate.tools.hub.results import ContentItem, ToolResult

    query = {"type": "object", "required": ["query"],
             "properties": {"query": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("memory", "search_nodes", "Search.", query),
                                  ToolSpec("memory", "read_graph", "All.", {"type": "object"}),
                                  ToolSpec("memory", "open_nodes", "Open.", query)])
    found = {"Marta": '{"entities": [{"name": "Marta"}], "relations": []}'}

    def call(server, tool, arguments, cancel=None, hooks=None):
        text = found.get(arguments.get("query"), '{"entities": [], "relations": []}')
        return ToolResult(server, tool, (ContentItem("text", text=text),))

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    bridge.call_tool("memory", "search_nodes", [], {"query": "Marta lives in a city"})
    assert bridge.turn.returned[-1].note == (
        "Note: memory.search_nodes(query='Marta lives in a city') found nothing. Searches "
        "often match single words or names, not sentences: before answering that nothing "
        "exists, search again with one name or word from the request, such as "
        "memory.search_nodes(query='Marta'), or read everything with memory.read_graph().")
    # A result, a one-word search, or a call that does not search: no note.
    for tool, words in (("search_nodes", "Marta"), ("search_nodes", "Oslo"),
                        ("open_nodes", "Marta lives here")):
        bridge.call_tool("memory", tool, [], {"query": words})
        assert tool == "open_nodes" or bridge.turn.returned[-1].note == ""
    assert bridge.turn.returned[-1].note.startswith("Note: memory.open_nodes(")  # 'query' searches
    assert empty("[]") and empty({"rows": []}) and empty("No results.") and empty(None)
    assert not empty({"count": 0}) and not empty("0") and not empty([{}]) and not empty('""')


def test_hints_keep_to_what_they_know():
    """A starred message is no wildcard; objects the tool itself takes miss a field, not
    the tool; a tool that lists allowed folders does not read everything."""
    from deskmate.app.agent.empty_result import empty_note
    from deskmate.app.agent.tool_errors import shape_hint, wildcard_hint
    from deskmate.tools.signatures import signature

    def spec(server, name, properties, description=""):
        schema = {"type": "object", "properties": properties, "required": list(properties)}
        return ToolSpec(server, name, description, schema)

    text = {"type": "string"}
    entities = {"type": "array", "items": {"type": "object", "properties": {
        "name": text, "entityType": text}, "required": ["name", "entityType"]}}
    specs = [spec("git", "git_commit", {"message": text, "repo_path": text}),
             spec("git", "git_search", {"pattern": text}),
             spec("memory", "create_entities", {"entities": entities}),
             spec("memory", "search_nodes", {"query": text}),
             spec("memory", "list_allowed_directories", {}, "Folders this server may use")]
    tools = {(s.server, signature(s).name): (s, signature(s)) for s in specs}
    commit = tools[("git", "git_commit")][1]
    assert wildcard_hint(tools, "git", commit, {"message": "Fix *bold* text"}) == ""
    assert "git.git_search(pattern: str)" in wildcard_hint(
        tools, "git", commit, {"repo_path": "/r/*.md"})
    create = tools[("memory", "create_entities")][1]
    assert shape_hint(tools, "memory", create, "required", ["entityType"],
                      {"name": "Ada", "type": "person"}) == ""
    assert shape_hint(tools, "memory", tools[("memory", "search_nodes")][1], "required",
                      ["query"], {"name": "Ada", "entityType": "person"}).startswith(
        "\nHint: objects with name, entityType are what memory.create_entities takes")
    note = empty_note(tools, "memory", tools[("memory", "search_nodes")][1],
                      {"query": "Ada lives in"}, [])
    assert note.startswith("Note: memory.search_nodes(") and "read everything" not in note


def test_a_repaired_calls_note_is_kept_apart_from_its_results_own_note():
    """The note that a call ran fixed is its own field (the cell's output says it first),
    not mixed into the result's note."""
    from deskmate.tools.hub.results import ContentItem, ToolResult

    schema = {"type": "object", "required": ["path"], "properties": {"path": {
        "type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("filesystem", "list_directory", "", schema)])

    def call(server, tool, arguments, cancel=None, hooks=None):
        if not arguments["path"].startswith("/"):
            return ToolResult(server, tool, (ContentItem("text", text="ENOENT"),),
                              is_error=True)
        return ToolResult(server, tool, (ContentItem("text", text="[]"),))

    bridge = ToolBridge(catalog, call, Policy(yes_all=True))
    bridge.new_turn(CallContext(said=lambda: "What is in /srv/data?"))
    assert bridge.call_tool("filesystem", "list_directory", [], {"path": "srv/data"}) == []
    last = bridge.turn.returned[-1]
    assert last.repaired.endswith("filesystem.list_directory(path='/srv/data') ran in its "
                                  "place, and the code went on with its result.")
    assert last.note == ""
