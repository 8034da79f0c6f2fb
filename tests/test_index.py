"""The system-prompt server index stays within its token budget."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deskmate.tools.catalog import Catalog
from deskmate.tools.index import build_index, shows_signatures
from deskmate.tools.spec import ToolSpec

ROOT = Path(__file__).resolve().parents[1]
TOOLSPACE = ROOT.parent / "shared" / "toolspace"


def words(text: str) -> int:
    return len(text.split())


def small() -> Catalog:
    return Catalog.from_specs([ToolSpec("git", "git_status"), ToolSpec("git", "git_log"),
                               ToolSpec("my-time", "get_current_time")],
                              summaries={"git": "Git repositories"})


def test_small_catalog_lists_every_tool():
    text = build_index(small(), words, budget=200)
    assert "- git — Git repositories: git_status, git_log" in text
    assert "- my_time: get_current_time" in text
    assert "search_tools" not in text.splitlines()[-1]


def test_every_signature_when_the_catalog_fits_its_budget():
    catalog = Catalog.from_specs(
        [ToolSpec("git", "git_log", "Shows the commit logs.\n\nMore.",
                  {"type": "object", "properties": {"repo_path": {"type": "string"},
                   "max_count": {"type": "integer", "default": 10}},
                   "required": ["repo_path"]}),
         ToolSpec("my-time", "get_current_time")], summaries={"git": "Git repositories"})
    text = build_index(catalog, words, budget=200, signatures=200)
    assert shows_signatures(text)
    assert "- git — Git repositories:\n  git_log(repo_path: str, max_count: int = 10)" in text
    assert " — Shows the commit logs" in text and "More." not in text
    assert "- my_time:\n  get_current_time()" in text
    # Over that budget (or with none), the index of names as before.
    for signatures in (5, 0):
        text = build_index(catalog, words, budget=200, signatures=signatures)
        assert not shows_signatures(text) and "git_log(" not in text and "git_log" in text


def big() -> Catalog:
    return Catalog.from_specs(
        [ToolSpec("files", f"op_{i}") for i in range(40)]
        + [ToolSpec("time", "now"), ToolSpec("time", "convert")])


def test_over_budget_names_what_fits_and_counts_the_rest():
    text = build_index(big(), words, budget=30)
    assert "Other servers (tool count): files (40)" in text
    assert "- time: now, convert" in text  # the small server still fits with its names
    assert text.splitlines()[-1].startswith("Tool names are not all listed")
    assert words(text) <= 30


def test_empty_catalog():
    assert build_index(Catalog.from_specs([]), words) == ""


@pytest.mark.skipif(not TOOLSPACE.exists(), reason="shared/toolspace not present")
def test_full_toolspace_stays_within_budget_at_any_size():
    catalog = Catalog.from_snapshots(TOOLSPACE)
    for n in (10, 100, 1156, 2000, 5000):
        assert words(build_index(catalog.scaled(n), words, budget=600)) <= 600, n
    assert words(build_index(catalog.scaled(5000), words, budget=200)) <= 200


def many(servers: int, tools: int) -> Catalog:
    return Catalog.from_specs([ToolSpec(f"server{s}", f"tool_{s}_{t}")
                               for s in range(servers) for t in range(tools)],
                              summaries={"server0": "The first one. It is long."})


@pytest.mark.parametrize("budget", [0, 10, 20, 40, 80, 160, 320])
def test_budget_holds_above_the_count_only_floor(budget):
    catalog = many(8, 6)
    floor = build_index(catalog, words, 0)  # no server named: how many, and how to search
    assert floor.splitlines()[1] == "Other servers (tool count): 8 servers (48 tools)"
    assert "search_tools" in floor.splitlines()[-1]
    text = build_index(catalog, words, budget)
    assert words(text) <= max(budget, words(floor))
    if budget < words(floor):
        assert text == floor
    # every server is either named or counted in "N more servers"
    named = sum(1 for s in range(8) if f"server{s}" in text)
    more = re.search(r"(\d+) (more )?servers \(", text)
    assert named + (int(more.group(1)) if more else 0) == 8
    listed = sum(1 for line in text.splitlines() if line.startswith("- "))
    assert listed == sum(1 for s in range(8) if f"tool_{s}_0" in text)


def test_count_tier_names_the_first_servers_that_fit():
    catalog = many(40, 3)
    floor = words(build_index(catalog, words, 0))
    text = build_index(catalog, words, floor + 7)  # 2 words a name, 1 for "more"
    assert "server0 (3); server1 (3); server2 (3); 37 more servers (111 tools)" in text
    assert words(text) <= floor + 7


def test_more_budget_never_names_fewer_servers_and_summaries_survive():
    catalog = many(8, 6)
    texts = [build_index(catalog, words, b) for b in range(0, 200, 5)]
    named = [sum(1 for line in text.splitlines() if line.startswith("- ")) for text in texts]
    assert named == sorted(named) and named[0] == 0 and named[-1] == 8
    shown = [sum(1 for s in range(8) if f"server{s} (6)" in text or f"- server{s}" in text)
             for text in texts]
    assert shown == sorted(shown) and shown[0] == 0 and shown[-1] == 8
    assert any("server0 (6) — The first one" in text for text in texts)
    assert "- server0 — The first one.: tool_0_0" in build_index(catalog, words, 1000)


def test_index_is_stable_for_the_kv_cache():
    # Every session must get the same text for the same servers, and string hashing (so
    # set order) differs from one process to the next: build it under several seeds.
    code = ("from deskmate.tools.catalog import Catalog; "
            "from deskmate.tools.index import build_index, shows_signatures; "
            "from deskmate.tools.spec import ToolSpec; "
            "c = Catalog.from_specs([ToolSpec(f'server{s}', f'tool_{s}_{t}') "
            "for s in range(8) for t in range(6)]); "
            "print(build_index(c, lambda text: len(text.split()), 60))")
    texts = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, text=True,
                            capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}
                            ).stdout for seed in ("1", "2", "3")}
    assert len(texts) == 1 and "Other servers" in texts.pop()


def test_real_tokenizer_counts(tiny_model):
    catalog = many(12, 10)

    def count(text: str) -> int:
        return len(tiny_model.tokenize(text))

    floor = count(build_index(catalog, count, 0))
    sizes = [count(build_index(catalog, count, floor + extra)) for extra in (0, 40, 150, 400)]
    assert all(size <= floor + extra for size, extra in zip(sizes, (0, 40, 150, 400),
                                                            strict=True))
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]
