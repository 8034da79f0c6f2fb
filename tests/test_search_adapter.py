"""benchmarks/search_adapter.py's fit: the query adapter it writes learns what it is shown."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from deskmate.tools.search import QueryAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/ is no package

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="fitting needs torch (the search extra)")


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_fit_moves_requests_toward_their_tools_and_is_repeatable():
    from benchmarks.search_adapter import fit

    rng = np.random.default_rng(7)
    tools = unit(rng.normal(size=(40, 16)))
    # Requests are their tool's vector turned by a fixed "how people ask" rotation, so the
    # nearest tool to a raw request is mostly another one; the map has to learn the turn.
    turn, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    answers = [[i % 40] for i in range(160)]
    requests = unit(tools[[a[0] for a in answers]] @ (0.2 * np.eye(16) + 0.8 * turn)
                    + 0.05 * rng.normal(size=(160, 16)))

    def top1(queries: np.ndarray, rows: slice) -> float:
        right = [a[0] for a in answers[rows]]
        return float(np.mean(np.argmax(queries[rows] @ tools.T, axis=1) == right))

    fitted, kept_out = slice(0, 120), slice(120, 160)
    up, down = fit(requests[fitted], tools, answers[fitted], rank=16, weight_decay=0.001,
                   epochs=150)
    assert up.shape == (16, 16) and down.shape == (16, 16)
    adapter = QueryAdapter(up, down)
    moved = np.stack([adapter(q) for q in requests])
    assert np.allclose(np.linalg.norm(moved, axis=1), 1, atol=1e-5)
    assert top1(moved, fitted) > top1(requests, fitted)
    # other requests for the same tools, not fitted on (measured: 0.05 raw, 1.0 moved)
    assert top1(moved, kept_out) > top1(requests, kept_out) + 0.5
    again = fit(requests[fitted], tools, answers[fitted], rank=16, weight_decay=0.001,
                epochs=150)
    assert np.allclose(again[0], up) and np.allclose(again[1], down)  # seeded


def test_folds_by_server_keep_each_servers_requests_out_of_its_training():
    from benchmarks.search_adapter import FOLDS, folds

    # ``accept`` is a set, as load_queries makes it: a request with an equivalent on
    # another server must still be tested with its own server (it once moved between folds
    # from one process to the next with the set's order)
    rows = [{"server": f"s{i % 7}", "tool": f"t{i}",
             "accept": {(f"s{i % 7}", f"t{i}"), (f"s{(i + 1) % 7}", "x")}} for i in range(70)]
    checked = np.arange(20, 70)
    parts = folds(rows, checked)
    assert len(parts["by_server"]) == len(parts["random"]) == FOLDS
    tested = np.concatenate([test for _, test in parts["by_server"]])
    assert sorted(tested) == list(checked)
    for train, test in parts["by_server"]:
        trained = {rows[i]["server"] for i in train}
        assert not trained & {rows[i]["server"] for i in test}
        assert len(train) + sum(rows[i]["server"] in {rows[j]["server"] for j in test}
                                for i in range(70)) == 70
    for train, test in parts["random"]:
        assert not set(train) & set(test) and len(train) + len(test) == 70
    assert [t.tolist() for _, t in folds(rows, checked)["by_server"]] == \
        [t.tolist() for _, t in parts["by_server"]]


def test_folds_by_tool_keep_every_request_for_a_tested_tool_out_of_training():
    from benchmarks.search_adapter import FOLDS, folds

    # two files ask for the same 30 tools (rows 0-29 and 30-59, the checked file last);
    # tool t3's second-file request names t4 as an equivalent
    rows = []
    for i in range(60):
        tool = f"t{i % 30}"
        accept = {("s", tool)} | ({("s", "t4")} if i == 33 else set())
        rows.append({"server": "s", "tool": tool, "accept": accept})
    checked = np.arange(30, 60)
    parts = folds(rows, checked)["by_tool"]
    assert len(parts) == FOLDS
    tested = np.concatenate([test for _, test in parts])
    assert sorted(tested) == list(checked)  # each checked request once
    for train, test in parts:
        out = {rows[i]["tool"] for i in test}
        assert not any({t for _, t in rows[i]["accept"]} & out for i in train)
        # the other file's request for a tested tool is out of training too
        assert not {i % 30 for i in train} & {i % 30 for i in test}
