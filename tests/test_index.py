"""The system-prompt server index stays within its token budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.catalog import Catalog
from tools.index import build_index
from tools.spec import ToolSpec

TOOLSPACE = Path(__file__).resolve().parents[1].parent / "shared" / "toolspace"


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


def big() -> Catalog:
    return Catalog.from_specs(
        [ToolSpec("files", f"op_{i}") for i in range(40)]
        + [ToolSpec("time", "now"), ToolSpec("time", "convert")])


def test_over_budget_names_what_fits_and_counts_the_rest():
    text = build_index(big(), words, budget=30)
    assert "- files (40 tools)" in text
    assert "- time: now, convert" in text  # the small server still fits with its names
    assert text.splitlines()[-1].startswith("Tool names are not all listed")
    assert words(text) <= 30


def test_empty_catalog():
    assert build_index(Catalog.from_specs([]), words) == ""


@pytest.mark.skipif(not TOOLSPACE.exists(), reason="shared/toolspace not present")
def test_full_toolspace_stays_flat():
    catalog = Catalog.from_snapshots(TOOLSPACE)
    sizes = [words(build_index(catalog.first(n), words, budget=600)) for n in (10, 100, 1156)]
    assert sizes[-1] <= 600 + 50  # every server named, even past the budget
    assert max(sizes) <= 650
